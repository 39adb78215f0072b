-- acp.rewind: the question about overlaps a rewind found is asked after
-- the host's event is handled, not inside it: the builtin picker waits
-- for a key, and asked inside the event it held the host's call (and, on
-- Neovim 0.10, left a "-- More --" prompt in the middle of it).
local rewind = require("acp.rewind")

local M = {}

M["the overlaps question comes after the event's handling"] = function(t)
  local orig = vim.ui.select
  local asked
  vim.ui.select = function(items, opts, on_choice)
    asked = { items = items, prompt = opts.prompt, item = opts.format_item(items[1]) }
    on_choice(nil)
  end
  local said = {}
  local s = {
    sid = 1,
    transcript = {
      message = function(_, kind, text)
        said[#said + 1] = kind .. ": " .. text
      end,
    },
  }
  local ok, err = pcall(rewind.on_rewound, s, { ask = 2 })
  t.ok(ok, tostring(err))
  t.eq(asked, nil, "not asked inside the event's handling")
  vim.wait(1000, function()
    return asked ~= nil
  end)
  vim.ui.select = orig
  t.ok(asked ~= nil, "asked once the event was handled")
  t.eq(asked.prompt, "The agent's changes overlap yours in 2 files:")
  t.eq(asked.item, "keep your lines in the overlaps")
  t.eq(said, { "warn: Rewind: files left as they are (the overlaps were not settled)." }, "no answer: files left")
end

return M
