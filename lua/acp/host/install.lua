--- Installing the host binary: the release's prebuilt binary for this
--- platform, checked against the release's SHA256SUMS, else `go build`.
--- Nothing is half installed: the binary is written next to its place under
--- another name and renamed over it once it is checked and runs.
---
--- build.lua (lazy.nvim's `build`, or `nvim -l build.lua`) and the first
--- :AcpChat without a binary both come here (:help acp-install).
local say = require("acp.notify")
local M = {}

--- Where releases are, {version} replaced by the plugin's (no "v"); the
--- binaries and SHA256SUMS are files under it.
M.default_url = "https://github.com/nvim-acp/nvim-acp/releases/download/v{version}"

local goos = { Linux = "linux", Darwin = "darwin" }
local goarch = { x86_64 = "amd64", amd64 = "amd64", aarch64 = "arm64", arm64 = "arm64" }

--- The platform as the release names it ("linux", "amd64"), or nil and the
--- platform as the system names it when no release binary can fit.
---@param uname? {sysname: string, machine: string}
---@return string|nil os, string|nil arch, string system
function M.platform(uname)
  uname = uname or vim.uv.os_uname()
  local os, arch = goos[uname.sysname], goarch[uname.machine]
  local system = ("%s/%s"):format(uname.sysname, uname.machine)
  if not (os and arch) then
    return nil, nil, system
  end
  return os, arch, system
end

--- The release file of the binary for os/arch.
function M.asset(os, arch)
  return ("nvim-acp-%s-%s"):format(os, arch)
end

--- The sha256 of name in a SHA256SUMS text (sha256sum's format), or nil.
---@param sums string
---@param name string
---@return string|nil
function M.checksum(sums, name)
  for line in (sums .. "\n"):gmatch("([^\n]*)\n") do
    local hash, file = line:match("^(%x+)%s+%*?(%S+)%s*$")
    if hash and #hash == 64 and file == name then
      return hash:lower()
    end
  end
end

--- The files a SHA256SUMS text lists.
local function listed(sums)
  local out = {}
  for line in (sums .. "\n"):gmatch("([^\n]*)\n") do
    local file = line:match("^%x+%s+%*?(%S+)")
    if file then
      out[#out + 1] = file
    end
  end
  return out
end

--- The release URL for version: opts.url, $NVIM_ACP_RELEASE_URL,
--- vim.g.acp_release_url, else the project's releases.
---@param version string
---@param url? string
function M.url(version, url)
  url = url or vim.env.NVIM_ACP_RELEASE_URL or vim.g.acp_release_url or M.default_url
  if url == "" then
    url = M.default_url
  end
  return (url:gsub("{version}", version):gsub("/+$", ""))
end

--- The plugin's version: $NVIM_ACP_VERSION, else the release tag the
--- checkout is at ("v0.2.0" gives "0.2.0"); nil and why when it is at none.
---@param root string
---@param cb fun(version: string|nil, why: string|nil)
function M.version(root, cb)
  local v = vim.env.NVIM_ACP_VERSION
  if v and v ~= "" then
    return cb((v:gsub("^v", "")))
  end
  local ok, obj = pcall(
    vim.system,
    { "git", "-C", root, "describe", "--tags", "--exact-match", "HEAD" },
    { text = true },
    function(res)
      local tag = vim.trim(res.stdout or "")
      if res.code == 0 and tag:match("^v?%d+%.%d+") then
        return cb((tag:gsub("^v", "")))
      end
      cb(
        nil,
        ('%s is not at a release tag, so no prebuilt binary matches it (with lazy.nvim, `version = "*"` installs releases)'):format(
          root
        )
      )
    end
  )
  if not ok then
    cb(nil, ("cannot ask git which release %s is (%s)"):format(root, tostring(obj)))
  end
end

--- The first of sha256sum, shasum, openssl found, as the command prefix
--- that prints a file's sha256 first on its line.
local function hasher()
  if vim.fn.executable("sha256sum") == 1 then
    return { "sha256sum" }
  elseif vim.fn.executable("shasum") == 1 then
    return { "shasum", "-a", "256" }
  elseif vim.fn.executable("openssl") == 1 then
    return { "openssl", "dgst", "-sha256", "-r" }
  end
end

--- Run cmd, then cb(res) on the main loop; a command that cannot start
--- gives code -1 and the reason in stderr.
local function run(cmd, opts, cb)
  local ok, err = pcall(vim.system, cmd, opts, function(res)
    vim.schedule(function()
      cb(res)
    end)
  end)
  if not ok then
    vim.schedule(function()
      cb({ code = -1, stdout = "", stderr = tostring(err) })
    end)
  end
end

-- curl's exit codes that mean the server was never reached.
local unreachable = { [5] = true, [6] = true, [7] = true, [28] = true, [35] = true, [60] = true }

--- Download url to path with curl; cb(err) with a sentence for the user.
local function download(url, path, cb)
  if vim.fn.executable("curl") ~= 1 then
    return cb("curl is not on PATH, so nothing can be downloaded")
  end
  run({ "curl", "-fsSL", "--connect-timeout", "15", "--retry", "2", "-o", path, url }, { text = true }, function(res)
    if res.code == 0 then
      return cb(nil)
    end
    local msg = vim.trim((res.stderr or ""):gsub("^curl: %(%d+%) ", ""))
    if unreachable[res.code] then
      return cb(("cannot reach %s (no network?): %s"):format(url, msg))
    end
    local status = msg:match("error: (%d%d%d)") or msg:match("returned error: (%d%d%d)")
    if status then
      return cb(("%s answered HTTP %s"):format(url, status), tonumber(status))
    end
    cb(("downloading %s failed: %s"):format(url, msg ~= "" and msg or ("curl exit " .. res.code)))
  end)
end

local function tmpname(bin, what)
  return ("%s.%s-%d-%d.part"):format(bin, what, vim.uv.os_getpid(), vim.uv.hrtime() % 1e9)
end

--- Put the checked file tmp in place of bin (rename: atomic), or remove
--- it; cb(err).
local function place(tmp, bin, cb)
  local ok, err = vim.uv.fs_rename(tmp, bin)
  if not ok then
    vim.uv.fs_unlink(tmp)
    return cb(("cannot put the host at %s: %s"):format(bin, err))
  end
  cb(nil)
end

--- Fetch the release binary of version for this platform into bin;
--- cb(err). Nothing is left behind on an error.
---@param opts {bin: string, version: string, url?: string, uname?: table}
---@param cb fun(err: string|nil)
function M.fetch(opts, cb)
  local os, arch, system = M.platform(opts.uname)
  if not os then
    return cb(("no prebuilt nvim-acp for %s (releases have linux and darwin, amd64 and arm64)"):format(system))
  end
  local base = M.url(opts.version, opts.url)
  local name = M.asset(os, arch)
  local sums_path = tmpname(opts.bin, "sums")
  local tmp = tmpname(opts.bin, "download")
  local function fail(err)
    vim.uv.fs_unlink(sums_path)
    vim.uv.fs_unlink(tmp)
    cb(err)
  end
  vim.fn.mkdir(vim.fs.dirname(opts.bin), "p")
  download(base .. "/SHA256SUMS", sums_path, function(err, status)
    if err then
      if status == 404 then
        err = ("no release %s at %s (SHA256SUMS: HTTP 404)"):format(opts.version, base)
      end
      return fail(err)
    end
    local sums = table.concat(vim.fn.readfile(sums_path, "b"), "\n")
    vim.uv.fs_unlink(sums_path)
    local want = M.checksum(sums, name)
    if not want then
      local have = table.concat(listed(sums), ", ")
      return fail(
        ("release %s has no binary for %s/%s (%s lists: %s)"):format(
          opts.version,
          os,
          arch,
          base .. "/SHA256SUMS",
          have ~= "" and have or "nothing"
        )
      )
    end
    download(base .. "/" .. name, tmp, function(err2, status2)
      if err2 then
        if status2 == 404 then
          err2 = ("release %s has no binary for %s/%s (%s: HTTP 404)"):format(
            opts.version,
            os,
            arch,
            base .. "/" .. name
          )
        end
        return fail(err2)
      end
      local h = hasher()
      if not h then
        return fail("none of sha256sum, shasum, openssl is on PATH to check the download")
      end
      run(vim.list_extend(vim.list_slice(h), { tmp }), { text = true }, function(res)
        local got = res.code == 0 and (res.stdout or ""):match("^(%x+)")
        if not got then
          return fail("cannot checksum the download: " .. vim.trim(res.stderr or ""))
        end
        if got:lower() ~= want then
          return fail(
            ("checksum mismatch for %s: got sha256 %s, SHA256SUMS says %s; nothing installed"):format(
              base .. "/" .. name,
              got:lower(),
              want
            )
          )
        end
        vim.uv.fs_chmod(tmp, tonumber("755", 8))
        run({ tmp, "--version" }, { text = true }, function(v)
          local out = vim.trim(v.stdout or "")
          if v.code ~= 0 or out ~= "nvim-acp " .. opts.version then
            return fail(
              ("the downloaded binary does not run as nvim-acp %s here (%s)"):format(
                opts.version,
                out ~= "" and out or vim.trim(v.stderr or "")
              )
            )
          end
          place(tmp, opts.bin, cb)
        end)
      end)
    end)
  end)
end

--- Build the host from root's source with Go into bin; cb(err).
---@param opts {root: string, bin: string}
---@param cb fun(err: string|nil)
function M.go_build(opts, cb)
  if vim.fn.executable("go") ~= 1 then
    return cb("`go` is not on PATH")
  end
  vim.fn.mkdir(vim.fs.dirname(opts.bin), "p")
  local tmp = tmpname(opts.bin, "build")
  run({ "go", "build", "-o", tmp, "./cmd/nvim-acp" }, { cwd = opts.root, text = true }, function(res)
    if res.code ~= 0 then
      vim.uv.fs_unlink(tmp)
      return cb("go build failed:\n" .. vim.trim(res.stderr or ""))
    end
    place(tmp, opts.bin, cb)
  end)
end

--- Write root/doc/tags so :help acp works.
function M.helptags(root)
  local doc = root .. "/doc"
  if vim.fn.isdirectory(doc) == 1 then
    pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
  end
end

--- Install the host: from source when asked (opts.from_source,
--- $NVIM_ACP_BUILD_FROM_SOURCE=1), else the release binary, else (no
--- release fits, or the download fails) `go build` when Go is there. Then
--- the help tags. notify(msg, level) tells the user what happens.
---@param opts {root: string, bin: string, url?: string, from_source?: boolean, notify?: fun(msg: string, level: integer)}
---@param cb fun(err: string|nil, how: string|nil) how: "download" or "go"
function M.install(opts, cb)
  local notify = opts.notify or function(msg, level)
    say("acp: " .. msg, level)
  end
  local function done(err, how)
    if not err then
      M.helptags(opts.root)
    end
    cb(err, how)
  end
  -- why: the reason no release binary was installed (nil: source asked
  -- for); failed: that reason is a failure to warn about.
  local function build(why, failed)
    if vim.fn.executable("go") ~= 1 then
      return done((why and (why .. "; and ") or "") .. "`go` is not on PATH to build the host from source (Go 1.25+)")
    end
    notify(
      (why and (why .. "; ") or "") .. "building the nvim-acp host with Go (a minute or two the first time)...",
      failed and vim.log.levels.WARN or vim.log.levels.INFO
    )
    M.go_build(opts, function(err)
      done(err and ("building the nvim-acp host failed: " .. err), "go")
    end)
  end
  if opts.from_source or vim.env.NVIM_ACP_BUILD_FROM_SOURCE == "1" then
    return build(nil)
  end
  M.version(opts.root, function(version, why)
    vim.schedule(function()
      if not version then
        return build(why)
      end
      notify(("downloading the nvim-acp host %s..."):format(version), vim.log.levels.INFO)
      M.fetch({ bin = opts.bin, version = version, url = opts.url, uname = opts.uname }, function(err)
        if err then
          return build(err, true)
        end
        notify(("nvim-acp host %s installed: %s"):format(version, opts.bin), vim.log.levels.INFO)
        done(nil, "download")
      end)
    end)
  end)
end

--- install(), waiting for its end (build.lua); returns err, how.
---@param opts table as install's
---@param timeout? integer ms (default 10 minutes)
function M.install_wait(opts, timeout)
  local finished, err, how = false, nil, nil
  M.install(opts, function(e, h)
    finished, err, how = true, e, h
  end)
  if not vim.wait(timeout or 600000, function()
    return finished
  end, 50) then
    return "installing the nvim-acp host timed out"
  end
  return err, how
end

return M
