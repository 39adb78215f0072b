--- :checkhealth acp
local config = require("acp.config")
local host = require("acp.host")

local M = {}

function M.check()
  local h = vim.health
  h.start("nvim-acp")
  if vim.fn.has("nvim-0.10") == 1 then
    h.ok("Neovim " .. tostring(vim.version()))
  else
    h.error("Neovim 0.10 or newer is required")
  end
  local bin = host.bin()
  if vim.fn.executable(bin) == 1 then
    local out = vim.system({ bin, "--version" }, { text = true }):wait()
    h.ok(("host: %s (%s)"):format(bin, vim.trim(out.stdout or "")))
  elseif vim.fn.executable("go") == 1 then
    h.warn("host not built yet: " .. bin, { "It is built on first use, or run `make` in " .. host.root() })
  else
    h.error("host not built and `go` not found", { "Install Go 1.22+ and run `make` in " .. host.root() })
  end
  h.info("log: " .. host.log_path())
  h.start("nvim-acp agents")
  for _, name in ipairs(config.agent_names()) do
    local spec = config.agent(name)
    if spec then
      local exe = spec.cmd[1]
      if exe == "{bin}" then
        h.ok(name .. ": bundled demo agent")
      elseif vim.fn.executable(exe) == 1 then
        h.ok(("%s: %s"):format(name, vim.fn.exepath(exe)))
        if exe:match("claude") and vim.uv.getuid() == 0 and not (spec.env and spec.env.IS_SANDBOX) then
          h.warn(name .. ": Claude Code refuses to run as root and session/new fails with an internal error", {
            ('In a container or sandbox, set agents.%s.env = { IS_SANDBOX = "1" }'):format(name),
          })
        end
      else
        h.info(("%s: `%s` not on PATH"):format(name, exe))
      end
    end
  end
end

return M
