-- acp.install's pure parts: platforms, the release's SHA256SUMS, the URL.
local install = require("acp.host.install")
local M = {}

M["platforms map to the release's names; others have none"] = function(t)
  local cases = {
    { { sysname = "Linux", machine = "x86_64" }, "linux", "amd64" },
    { { sysname = "Linux", machine = "aarch64" }, "linux", "arm64" },
    { { sysname = "Darwin", machine = "arm64" }, "darwin", "arm64" },
    { { sysname = "Darwin", machine = "x86_64" }, "darwin", "amd64" },
    { { sysname = "Linux", machine = "armv7l" }, nil, nil },
    { { sysname = "Windows_NT", machine = "x86_64" }, nil, nil },
    { { sysname = "FreeBSD", machine = "amd64" }, nil, nil },
  }
  for _, c in ipairs(cases) do
    local os, arch, system = install.platform(c[1])
    t.eq({ os, arch }, { c[2], c[3] }, system)
    t.eq(system, c[1].sysname .. "/" .. c[1].machine)
  end
end

M["SHA256SUMS gives the asset's hash, nothing for another name"] = function(t)
  local a = string.rep("a", 64)
  local b = string.rep("B", 64)
  local sums = table.concat({
    a .. "  nvim-acp-linux-amd64",
    b .. " *nvim-acp-darwin-arm64", -- sha256sum's binary mode
    "garbage line",
    string.rep("c", 63) .. "  nvim-acp-linux-arm64", -- too short
  }, "\n")
  t.eq(install.checksum(sums, "nvim-acp-linux-amd64"), a)
  t.eq(install.checksum(sums, "nvim-acp-darwin-arm64"), b:lower())
  t.eq(install.checksum(sums, "nvim-acp-linux-arm64"), nil)
  t.eq(install.checksum(sums, "nvim-acp-linux"), nil)
  t.eq(install.checksum("", "nvim-acp-linux-amd64"), nil)
  t.eq(install.asset("darwin", "arm64"), "nvim-acp-darwin-arm64")
end

M["the release URL: given, from the environment, else the project's"] = function(t)
  local saved = vim.env.NVIM_ACP_RELEASE_URL
  vim.env.NVIM_ACP_RELEASE_URL = nil
  t.eq(install.url("0.2.0"), "https://github.com/nvim-acp/nvim-acp/releases/download/v0.2.0")
  t.eq(install.url("0.2.0", "https://mirror.example/nvim-acp/{version}/"), "https://mirror.example/nvim-acp/0.2.0")
  vim.env.NVIM_ACP_RELEASE_URL = "http://127.0.0.1:8080/r/v{version}"
  t.eq(install.url("1.0.0"), "http://127.0.0.1:8080/r/v1.0.0")
  vim.env.NVIM_ACP_RELEASE_URL = saved
end

return M
