-- luacheck lua plugin tests
std = "luajit"
globals = { "vim" }
max_line_length = false
