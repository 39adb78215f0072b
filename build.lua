-- Installs the nvim-acp host: lazy.nvim runs this file as the plugin's
-- `build` step; without a plugin manager run `nvim -l build.lua` here.
-- It fetches the release binary for this platform (checked against the
-- release's SHA256SUMS) or, when none fits or Go is asked for, builds it
-- with Go, then writes doc/tags (:help acp-install).
--   NVIM_ACP_RELEASE_URL        where releases are ({version} replaced)
--   NVIM_ACP_BUILD_FROM_SOURCE=1 build with Go, download nothing
-- With a UI (lazy.nvim) messages are notifications; `nvim -l` writes them
-- to stderr.
local function say(msg, level)
  if #vim.api.nvim_list_uis() > 0 then
    vim.notify("nvim-acp: " .. msg, level or vim.log.levels.INFO)
  else
    io.stderr:write("nvim-acp: ", msg, "\n")
  end
end
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
-- Through package.path, not 'runtimepath': a directory name may hold a comma.
package.path = ("%s/lua/?.lua;%s/lua/?/init.lua;%s"):format(root, root, package.path)
local install = require("acp.host.install")
local err, how = install.install_wait({
  root = root,
  bin = vim.env.NVIM_ACP_BIN or (root .. "/bin/nvim-acp"),
  notify = function(msg, level)
    say(msg, level)
  end,
})
if err then
  if #vim.api.nvim_list_uis() == 0 then
    io.stderr:write("nvim-acp: error: ", err, "\n")
    os.exit(1)
  end
  error("nvim-acp: " .. err, 0)
end
say(("host ready (%s); doc/tags written"):format(how == "go" and "built with Go" or "release binary"))
