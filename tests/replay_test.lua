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

return M
