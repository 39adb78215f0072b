-- acp.input.context: image files written out in a prompt (as a terminal pastes a
-- dropped file) are found; nothing else is.
local context = require("acp.input.context")

local M = {}

local png = "\137PNG\r\n\26\n" .. ("\0"):rep(20)

local function put(path, data)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
end

M["image paths: absolute, ~, quoted, escaped spaces, file:// URIs"] = function(t)
  local dir = vim.fn.tempname()
  local a, b, c = dir .. "/a.png", dir .. "/with space/b.png", dir .. "/c.txt"
  put(a, png)
  put(b, png)
  put(c, "text")
  t.eq(context.image_paths("look at " .. a .. ", please"), { a })
  t.eq(context.image_paths(("it's '%s' isn't it"):format(b)), { b })
  t.eq(context.image_paths(("and %s"):format(b:gsub(" ", "\\ "))), { b })
  t.eq(context.image_paths("file://" .. b:gsub(" ", "%%20")), { b })
  t.eq(context.image_paths("what's in " .. a .. "? it's new"), { a })
  t.eq(context.image_paths(c .. " " .. dir .. "/missing.png a.png `" .. a .. "`"), {})
  local home = vim.env.HOME
  vim.env.HOME = dir
  t.eq(context.image_paths("~/a.png"), { a })
  vim.env.HOME = home
end

M["an image block carries the file's type and bytes"] = function(t)
  local path = vim.fn.tempname() .. ".png"
  put(path, png)
  local block = context.image_block(path)
  t.eq(block.type, "image")
  t.eq(block.mimeType, "image/png")
  t.eq(vim.base64.decode(block.data), png)
  put(path, "not an image")
  local none, err = context.image_block(path)
  t.eq(none, nil)
  t.ok(err:find("not a PNG", 1, true), err)
end

return M
