--- Entry point of host -> Lua calls (host/host.go): see acp.events.
return require("acp.events")
