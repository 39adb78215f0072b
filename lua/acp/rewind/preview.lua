--- The preview of a rewind: what happens to each file (lines added and
--- removed, created, deleted, left alone) and to the conversation, in a
--- float; one key confirms, others choose what to rewind.
local layout = require("acp.layout")

local M = {}

local api = vim.api

--- The keys of the preview and what each chooses.
M.keys = {
  { "y", "confirm", "rewind (as listed)" },
  { "<CR>", "confirm", nil },
  { "x", "exact", "files exactly as they were (your later edits too)" },
  { "k", "keep", "files: undo the agent's changes only, keep yours" },
  { "f", "files", "files only (the conversation stays)" },
  { "c", "conversation", "conversation only (the files stay)" },
  { "q", "cancel", "cancel" },
  { "<Esc>", "cancel", nil },
}

local marks = { restore = "M", create = "A", delete = "D", conflict = "!", unexplained = "?" }

--- text cut to width display cells, "..." ending a cut one (whole
--- characters: a message's multibyte text stays valid UTF-8).
---@param text string
---@param width integer
---@return string
function M.fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local n = math.min(vim.fn.strchars(text), width)
  while n > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, n)) > width - 3 do
    n = n - 1
  end
  return vim.fn.strcharpart(text, 0, n) .. "..."
end

--- The preview's lines for info (see acp.rewind).
---@param info table
---@return string[]
function M.lines(info)
  local out = {}
  local text = vim.split(info.text, "\n", { plain = true })[1] or ""
  text = M.fit(text, 60)
  out[#out + 1] = ("Rewind to before message %d: %s"):format(info.n, text)
  out[#out + 1] = ""
  if info.files then
    if info.plan_err then
      out[#out + 1] = "Files: " .. info.plan_err
    else
      local p = info.plan
      local changed = 0
      for _, f in ipairs(type(p.files) == "table" and p.files or {}) do
        if f.action ~= "same" then
          changed = changed + 1
        end
      end
      out[#out + 1] = ("Files (%s): %s"):format(
        info.mode == "exact" and "exactly as they were, your later edits too"
          or "the agent's changes undone, yours kept",
        changed == 0 and "nothing to change" or (changed .. " to change")
      )
      for _, f in ipairs(type(p.files) == "table" and p.files or {}) do
        if f.action ~= "same" then
          local rel = vim.fn.fnamemodify(f.path, ":~:.")
          local what
          if f.action == "unexplained" then
            what = "changed in a way the record cannot explain: left alone"
          elseif f.action == "conflict" then
            what = ("%d overlap%s with your changes: asked"):format(f.conflicts, f.conflicts == 1 and "" or "s")
          elseif f.binary then
            what = f.action == "create" and "created (binary)" or f.action == "delete" and "deleted" or "binary"
          else
            what = ("+%d -%d"):format(f.added, f.removed)
            if f.action == "create" then
              what = what .. " (created again)"
            elseif f.action == "delete" then
              what = what .. " (deleted)"
            end
          end
          if f.user and info.mode == "exact" then
            what = what .. " (your later edits undone)"
          elseif f.user then
            what = what .. " (your edits kept)"
          end
          out[#out + 1] = ("  %s %s  %s"):format(marks[f.action] or " ", rel, what)
        end
      end
    end
  else
    out[#out + 1] = "Files: left as they are"
  end
  out[#out + 1] = ""
  if info.conversation then
    out[#out + 1] = ("Conversation: %d turn%s dropped (folded in the chat, marked rewound); message %d back in the input."):format(
      info.dropped,
      info.dropped == 1 and "" or "s",
      info.n
    )
    if info.fork then
      out[#out + 1] = ("  The agent goes on in a fork of its own session at message %d's answer (its own history)."):format(
        info.n - 1
      )
    elseif info.n <= 1 then
      out[#out + 1] = "  The agent goes on in a new session, with nothing of the conversation."
    else
      out[#out + 1] = ("  The agent goes on in a new session, told the conversation kept with your next prompt%s."):format(
        info.fork_why and (" (not a fork: %s)"):format(info.fork_why) or ""
      )
    end
  else
    out[#out + 1] = "Conversation: kept as it is"
  end
  out[#out + 1] = ""
  local keys = {}
  for _, k in ipairs(M.keys) do
    if k[3] then
      keys[#keys + 1] = k[1] .. " " .. k[3]
    end
  end
  out[#out + 1] = table.concat(keys, " · ")
  return out
end

--- Show info's preview; on_key(choice) gets the choice of the key typed
--- ("confirm", "exact", "keep", "files", "conversation", "cancel").
---@param info table
---@param on_key fun(choice: string)
---@return integer buf
function M.open(info, on_key)
  local lines = M.lines(info)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  vim.b[buf].acp_role = "rewind"
  -- As high as its lines take wrapped at word ends, the keys (last) on
  -- screen; laid out again for each size of the editor.
  local function cfg()
    local width = 20
    for _, l in ipairs(lines) do
      width = math.max(width, vim.fn.strdisplaywidth(l))
    end
    width = math.max(1, math.min(width + 2, vim.o.columns - 4))
    local height = math.max(1, math.min(layout.wrapped_rows(lines, width, true), vim.o.lines - 4))
    return {
      relative = "editor",
      width = width,
      height = height,
      row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
      col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    }
  end
  local win = api.nvim_open_win(
    buf,
    true,
    vim.tbl_extend("force", cfg(), { style = "minimal", border = "rounded", title = " Rewind " })
  )
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  layout.follow_resize(win, cfg)
  local done = false
  local function choose(choice)
    if done then
      return
    end
    done = true
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
    on_key(choice)
  end
  for _, k in ipairs(M.keys) do
    vim.keymap.set("n", k[1], function()
      choose(k[2])
    end, { buffer = buf, nowait = true, desc = k[3] })
  end
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      vim.schedule(function()
        choose("cancel")
      end)
    end,
  })
  return buf
end

return M
