-- acp.agents.remote: what the chat shows of an agent server's URL, the token
-- (from the environment, or typed once and kept in memory), and the agent
-- options acp_open gets for remote and prefixed agents.
local remote = require("acp.agents.remote")

local M = {}

M["the URL shown has no credentials, query or fragment"] = function(t)
  for url, want in pairs({
    ["https://user:pw@agents.example.com:8443/acp?token=s3cret#x"] = "https://agents.example.com:8443/acp",
    ["ws://127.0.0.1:9/acp"] = "ws://127.0.0.1:9/acp",
    ["http://h?token=x"] = "http://h",
    ["not a url"] = "not a url",
  }) do
    t.eq(remote.redact(url), want, url)
  end
end

M["a token from the environment, or an error naming the variable"] = function(t)
  vim.env.ACP_TEST_TOKEN = "from-env"
  t.eq(remote.token("far", { url = "https://x", token_env = "ACP_TEST_TOKEN" }), "from-env")
  vim.env.ACP_TEST_TOKEN = nil
  local tok, err = remote.token("far", { url = "https://x", token_env = "ACP_TEST_TOKEN" })
  t.eq(tok, nil)
  t.eq(err, 'agents["far"].token_env: $ACP_TEST_TOKEN is not set')
  t.eq(remote.token("far", { url = "https://x" }), nil)
end

M["a typed token is asked once, hidden, and asked again once forgotten"] = function(t)
  local asked = 0
  local orig = vim.fn.inputsecret
  vim.fn.inputsecret = function()
    asked = asked + 1
    return "typed-" .. asked
  end
  local spec = { url = "https://x/acp?k=v", token_prompt = true }
  t.eq(remote.token("far", spec), "typed-1")
  t.eq(remote.token("far", spec), "typed-1")
  t.eq(asked, 1)
  t.ok(remote.refused("POST https://x/acp: 401 Unauthorized: the server refused the credentials"))
  remote.forget("far")
  t.eq(remote.token("far", spec), "typed-2")
  vim.fn.inputsecret = function()
    return ""
  end
  remote.forget("far")
  local tok, err = remote.token("far", spec)
  t.eq(tok, nil)
  t.eq(err, "no token given for far")
  vim.fn.inputsecret = orig
  remote.forget("far")
end

M["open options: url, transport, headers, token; prefix and absolute path_map"] = function(t)
  vim.env.ACP_TEST_TOKEN = "tok"
  local f = remote.open_fields("far", {
    url = "https://x/acp",
    transport = "http",
    headers = { ["X-A"] = "b" },
    token_env = "ACP_TEST_TOKEN",
  })
  t.eq(f, { url = "https://x/acp", transport = "http", headers = { ["X-A"] = "b" }, token = "tok" })
  vim.env.ACP_TEST_TOKEN = nil
  local home = vim.fn.expand("~")
  f = remote.open_fields("box", {
    cmd = { "a" },
    prefix = { "docker", "exec", "-i", "c" },
    path_map = { ["/workspace"] = "~/src/proj/" },
    terminal_host = "agent",
  })
  t.eq(f, {
    prefix = { "docker", "exec", "-i", "c" },
    path_map = { ["/workspace"] = home .. "/src/proj" },
    terminal_host = "agent",
  })
  t.eq(
    remote.starting("box", { prefix = { "docker", "exec", "-i", "c" } }, { "a", "--acp" }),
    "Starting box: `docker exec -i c a --acp`"
  )
  t.eq(remote.starting("far", { url = "https://u:p@x/acp?t=1" }, {}), "Connecting to far at https://x/acp")
end

M["open options: ACP v2 offered per agent or by setup's protocol, v1 unsaid"] = function(t)
  local config = require("acp.config")
  local saved = config.options.protocol
  t.eq(remote.open_fields("a", { cmd = { "a" } }).protocol_version, nil)
  t.eq(remote.open_fields("a", { cmd = { "a" }, protocol = { version = 2 } }).protocol_version, 2)
  config.options.protocol = { version = 2 }
  t.eq(remote.open_fields("a", { cmd = { "a" } }).protocol_version, 2)
  t.eq(remote.open_fields("a", { cmd = { "a" }, protocol = { version = 1 } }).protocol_version, nil)
  config.options.protocol = saved
end

return M
