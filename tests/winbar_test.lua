-- acp.chat.winbar: what the chat's winbar says in each state, and how it is cut
-- when the window is narrow (the agent's name and the state stay).
local config = require("acp.config")
local winbar = require("acp.chat.winbar")

local M = {}

local function session(fields)
  return vim.tbl_extend("force", {
    agent = "claude",
    title = "Claude Agent",
    state = "ready",
    since = 0,
    settings = { mode_name = "Default", model_name = "Sonnet" },
  }, fields or {})
end

--- The winbar as drawn in a window width columns wide.
local function drawn(s, now, width)
  vim.cmd("silent! only")
  local win = vim.api.nvim_get_current_win()
  vim.o.columns = math.max(width, 20)
  vim.cmd("vsplit")
  vim.api.nvim_win_set_width(0, width)
  local out =
    vim.api.nvim_eval_statusline(winbar.text(s, now, width), { winid = 0, use_winbar = true, maxwidth = width })
  vim.cmd("close")
  vim.api.nvim_set_current_win(win)
  return out.str
end

M["states: spinner and elapsed time while starting or busy"] = function(t)
  config.setup({ ui = { icons = false } })
  t.eq(winbar.state_text(session(), 5000), "[ready]")
  t.eq(
    winbar.state_text(session({ state = "busy", since = 1000 }), 13000),
    "[" .. winbar.frame(13000, true) .. " busy 12s]"
  )
  t.ok(winbar.frame(0, true) ~= winbar.frame(winbar.interval, true), "the spinner turns")
  t.eq(
    winbar.state_text(session({ state = "starting", since = 0 }), 65000),
    "[" .. winbar.frame(65000, true) .. " starting 1m05s]"
  )
  t.eq(
    winbar.state_text(session({ state = "awaiting_permission", since = 0 }), 3000),
    "[permission pending (<C-g>) 3s]"
  )
  config.setup({ keymaps = { input = { permission = "<M-p>" } } })
  t.eq(winbar.state_text(session({ state = "awaiting_permission" }), 0), "[permission pending (<M-p>) 0s]")
  config.setup({ keymaps = { input = { permission = false }, chat = { permission = false } } })
  t.eq(winbar.state_text(session({ state = "awaiting_permission" }), 0), "[permission pending (:AcpPermission) 0s]")
  config.setup({})
  t.ok(winbar.animated("busy") and winbar.animated("starting") and not winbar.animated("ready"))
end

M["a narrow winbar keeps the agent's name and the state"] = function(t)
  config.setup({ ui = { icons = false } })
  local s = session({ session_title = "Refactor the parser into smaller functions", state = "busy", since = 0 })
  local wide = drawn(s, 2000, 120)
  t.ok(wide:find("Claude Agent | Refactor the parser", 1, true), wide)
  t.ok(wide:find("mode: Default | model: Sonnet", 1, true), wide)
  local state = "[" .. winbar.frame(2000, true) .. " busy 2s]"
  t.ok(wide:find(state, 1, true), wide)
  local narrow = drawn(s, 2000, 40)
  t.ok(vim.startswith(narrow, "Claude Agent "), narrow)
  t.ok(vim.endswith(vim.trim(narrow), state), narrow)
  t.ok(not narrow:find("Refactor the parser", 1, true), "the middle is cut: " .. narrow)
  config.setup({})
end

-- Bug: at 80 columns the winbar was cut in the middle of a word
-- ("demo (no AI) <del: Demo Fast [ready]"). Whole parts go instead.
M["a narrow winbar drops whole parts, never half a word"] = function(t)
  config.setup({ ui = { icons = false } })
  local s = session({
    title = "demo (no AI)",
    first_prompt = "Please tidy up @README.md",
    settings = { mode_name = "Ask first", model_name = "Demo Fast" },
  })
  local out = drawn(s, 0, 44)
  t.ok(vim.startswith(out, "demo (no AI) | model: Demo Fast ") and vim.endswith(vim.trim(out), " [ready]"), out)
  t.ok(not out:find("<", 1, true) and not out:find("mode:", 1, true), out)
  out = drawn(s, 0, 62)
  t.ok(out:find("demo (no AI) | mode: Ask first | model: Demo Fast ", 1, true), out)
  config.setup({})
end

M["a window too narrow for name and state gets the short state"] = function(t)
  local s = session({ title = "demo (no AI)", state = "awaiting_permission", since = 0 })
  local narrow = drawn(s, 13000, 36)
  t.ok(vim.endswith(vim.trim(narrow), "[permission: <C-g>]"), narrow)
  t.ok(vim.startswith(narrow, "demo (no AI) "), narrow)
  local wide = drawn(s, 13000, 80)
  t.ok(vim.endswith(vim.trim(wide), "[permission pending (<C-g>) 13s]"), wide)
end

M["the winbar shows usage and plan; % is escaped"] = function(t)
  local s = session({
    session_title = "100% done",
    plan = { { content = "a", status = "completed" }, { content = "b", status = "in_progress" } },
    usage = { used = 25, size = 100 },
  })
  local out = drawn(s, 0, 150)
  t.ok(out:find("100% done | mode: Default | model: Sonnet | plan 1/2: b | ctx 25%", 1, true), out)
end

M["the winbar counts the agent's background work (ACP v2), none when empty"] = function(t)
  local s = session({ background = { { type = "terminal", id = "t1" }, { type = "tool_call", id = "c1" } } })
  local out = drawn(s, 0, 150)
  t.ok(out:find("| 2 in background", 1, true), out)
  s.background = nil
  out = drawn(s, 0, 150)
  t.ok(not out:find("background", 1, true), out)
end

M["the agent's sign-in: the account in use first, signed out kept longest"] = function(t)
  local s = session({
    auth_status = {
      state = "authenticated",
      accounts = { { label = "API key" }, { label = "Claude Max", active = true } },
    },
  })
  t.ok(drawn(s, 0, 150):find("Claude Agent | Claude Max | mode: Default", 1, true), drawn(s, 0, 150))
  s.auth_status = { state = "unauthenticated", accounts = {} }
  local out = drawn(s, 0, 150)
  t.ok(out:find("model: Sonnet | not signed in", 1, true), out)
  t.ok(drawn(s, 0, 42):find("not signed in", 1, true), drawn(s, 0, 42))
  s.auth_status = { state = "not_required" }
  t.ok(not drawn(s, 0, 150):find("sign", 1, true), drawn(s, 0, 150))
  t.eq(
    winbar.auth_text({
      state = "authenticated",
      accounts = { { label = "A", active = true }, { label = "B", active = false } },
    }),
    "signed in: A"
  )
  t.eq(winbar.auth_text({ state = "_vendor" }), "sign-in state unknown")
end

-- Bug (issue 31): the agent's names went into the winbar whole; a
-- thousand switches with long names made each draw quadratic (at every
-- update and spinner frame: Neovim stopped answering), and escapes were
-- drawn raw. Each part is now a short label; switches past a few counted.
M["the agent's names are short labels, escapes visible, % literal"] = function(t)
  config.setup({ ui = { icons = false } })
  local options = {}
  for i = 1, 1000 do
    options[i] = { id = "s" .. i, name = i .. string.rep("é", 300), type = "boolean", currentValue = true }
  end
  local s = session({
    title = "Agent\27]2;x\7",
    session_title = "%{execute('call writefile([1], \"PWNED\")')}",
    settings = setmetatable({
      mode_name = "\27[2J" .. string.rep("%{execute('x')}", 3000),
      model_name = "m\226\128\174",
      config_options = options,
    }, { __index = require("acp.session.settings").new() }),
    plan = { { content = string.rep("%{system('x')}", 1000), status = "in_progress" } },
    usage = { used = 1e300, size = 1e-300, cost = { amount = 1, currency = string.rep("%", 100) } },
  })
  local bar = winbar.text(s, 0)
  t.ok(#bar < 2000, ("a winbar of %d bytes"):format(#bar))
  local out = vim.api.nvim_eval_statusline(bar, { winid = 0, use_winbar = true, maxwidth = 2000 }).str
  t.ok(vim.startswith(out, "Agent␛]2;x␇ | %{execute('call writefile([1], \"PWNED\")')} | "), out)
  t.ok(out:find("| mode: ␛[2J%{execute('x')}%{execute('x')}%{execute('x')}%{execute(… |", 1, true), out)
  t.ok(out:find("| model: m⟨U+202E⟩ | +1" .. string.rep("é", 58) .. "… | +2", 1, true), out)
  t.ok(out:find("| +996 switches | plan 0/1: %{system('x')}", 1, true), out)
  t.ok(out:find("| ctx ? 1.00 " .. string.rep("%", 11) .. "… ", 1, true), out)
  t.ok(not out:find("\27", 1, true) and vim.fn.filereadable("PWNED") == 0, out)
  -- Cut to fit: whole parts go, first ones first.
  out = drawn(s, 0, 80)
  t.ok(vim.startswith(out, "Agent␛]2;x␇ | ctx ? 1.00 ") and vim.endswith(vim.trim(out), "[ready]"), out)
  config.setup({})
end

M["another session's wait that does not fit is left out, not cut"] = function(t)
  local sessions = require("acp.sessions")
  local other = {
    key = sessions.next_key(),
    prompts = {
      waits_hidden = function()
        return true
      end,
    },
  }
  sessions.add(other, true)
  local s = session({ title = "demo (no AI)", state = "awaiting_permission", since = 0 })
  local narrow = drawn(s, 13000, 36)
  local wide = drawn(s, 13000, 80)
  sessions.forget(other)
  t.ok(not narrow:find("<", 1, true) or narrow:find("<C-g>", 1, true) == narrow:find("<", 1, true), narrow)
  t.ok(vim.startswith(narrow, "demo (no AI) "), narrow)
  t.ok(vim.endswith(vim.trim(narrow), "[permission: <C-g>]"), narrow)
  t.ok(wide:find("1 other session waits", 1, true) ~= nil, wide)
end

return M
