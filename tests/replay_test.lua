-- acp.session.replay: a transcript's lines read back into turns (a saved chat
-- resumed with session/resume, the chat a fork starts from).
local replay = require("acp.session.replay")

local M = {}

M["turns: headings start turns, code blocks keep their ## lines"] = function(t)
  local lines = {
    "Starting fake: `fake`",
    "",
    "Session ready (s1).",
    "",
    "## You",
    "fix it",
    "Context: a.lua",
    "",
    "## Claude",
    "Here:",
    "```markdown",
    "## not a heading",
    "```",
    "",
    "_stop: end_turn_",
    "## You",
    "",
    "thanks",
    "",
  }
  t.eq(replay.turns(lines), {
    { user = true, text = "fix it\nContext: a.lua" },
    { user = false, text = "Here:\n```markdown\n## not a heading\n```\n\n_stop: end_turn_" },
    { user = true, text = "thanks" },
  })
  t.eq(replay.turns({ "no heading at all" }), {})
end

M["show: the turns a rewind dropped fold again, until a redo"] = function(t)
  local rchat = require("acp.rewind.chat")
  local function messages(lines)
    local buf = vim.api.nvim_create_buf(false, true)
    local s = { transcript = require("acp.chat.transcript").new(buf, { agent = "agent", icons = false }) }
    replay.show(s, lines)
    local out = vim.tbl_map(function(m)
      return m.text
    end, rchat.messages(s))
    vim.api.nvim_buf_delete(buf, { force = true })
    return out
  end
  local chat = {
    "## You",
    "ask-one",
    "## Agent",
    "reply-alpha",
    "## You",
    "ask-two",
    "## Agent",
    "reply-beta",
    "## You",
    "ask-three",
    "## Agent",
    "reply-gamma",
    "Rewound the conversation to before message 2. A new session of fake takes over.",
  }
  local resent = { "## You", "ask-two-edited", "## Agent", "reply-delta" }
  t.eq(messages(vim.list_extend(vim.list_slice(chat), resent)), { "ask-one", "ask-two-edited" })
  -- Redone before the next prompt: the turns are the conversation's again.
  local redone = vim.list_extend(vim.list_slice(chat), { "Rewind undone (redo)." })
  t.eq(messages(vim.list_extend(redone, resent)), { "ask-one", "ask-two", "ask-three", "ask-two-edited" })
  -- A second rewind counts the messages left by the first.
  local twice = vim.list_extend(vim.list_slice(chat), resent)
  twice[#twice + 1] = "Rewound the conversation to before message 2: continued in a fork at message 1's answer."
  t.eq(messages(vim.list_extend(twice, { "## You", "ask-two-third" })), { "ask-one", "ask-two-third" })
end

return M
