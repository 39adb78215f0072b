--- The options given to setup(), kept until acp.config is first loaded: it
--- merges and checks them then, so setup() parses none of its 900 lines and
--- a Neovim start that never uses nvim-acp pays for none of it.
local M = {}

---@type table|nil
M.given = nil

return M
