package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// Killing a prefix's process here does not end the command it started on
// the far side: `docker exec`'s command lives on in the container, and so
// does `ssh`'s when it has no terminal there. So a terminal command run
// through a prefix carries a tag there, in its environment (FarTagKey),
// which everything it starts inherits, setsid and daemons included; ending
// it runs a second script through the same prefix that ends every process
// there carrying that tag. The tag is in the environment the command's
// shell starts with (`env` starts it): what the stop reads is each
// process's environment as it was exec'd (/proc/PID/environ), and a
// variable the shell exports itself is only in its children's, so a shell
// not yet at its last command's exec, or looping, would be missed.

// FarTagKey is the environment variable that tags, on the far side of a
// prefix, the processes of one command run through it (see Far).
const FarTagKey = "NVIM_ACP_TERM"

// farGrace is how long the far side's processes get between SIGTERM and
// SIGKILL, in tenths of a second (the stop script's polling steps).
const farGrace = 20

// Far is a command run through a prefix whose processes on the far side
// can be ended there (Stop).
type Far struct {
	Argv   []string // what to run here: the prefix, then the tagged script
	prefix []string
	tag    string
	proc   string // the far side's /proc (tests name a missing one)
	grace  int    // SIGTERM to SIGKILL, in tenths of a second
}

// ThroughPrefixTagged is ThroughPrefix for a command that Stop can end on
// the far side: its script exports FarTagKey with a tag of its own first.
func ThroughPrefixTagged(prefix []string, command string, args []string, dir string) *Far {
	return newFar(prefix, command, args, dir, "/proc")
}

// newFar is ThroughPrefixTagged with the far side's /proc at proc.
func newFar(prefix []string, command string, args []string, dir, proc string) *Far {
	// Base32 letters and digits: nothing a shell or a regexp treats
	// specially, unique across hosts and restarts.
	f := &Far{prefix: prefix, tag: "t" + rand.Text(), proc: proc, grace: farGrace}
	f.Argv = throughPrefix(prefix, f.tagScript()+commandScript(command, args, dir), FarTagKey+"="+f.tag)
	return f
}

// pidFile is where the command's script notes its pid for Stop (without
// /proc, with its start time, against reuse): where Stop lands finds it,
// or knows it is not where the command ran.
func (f *Far) pidFile() string {
	return `"${TMPDIR:-/tmp}/nvim-acp-` + f.tag + `.pid"`
}

// stopFile is the mark a stop leaves where the command has not started
// (yet) while it runs here: the command's script, starting after it, ends
// at once (exit 143, as SIGTERM) and removes it.
func (f *Far) stopFile() string {
	return `"${TMPDIR:-/tmp}/nvim-acp-` + f.tag + `.stop"`
}

// tagScript is what the command's script runs first (its shell has the
// tag in its environment already): the end if a stop came first, the
// pid file written. The order matters: its shell carries the tag before
// it looks for the mark, and a stop leaves the mark before it looks for
// the tag, so either the stop finds the shell or the shell the mark.
func (f *Far) tagScript() string {
	return "{ if [ -e " + f.stopFile() + " ]; then rm -f " + f.stopFile() + "; exit 143; fi; } 2>/dev/null; " +
		"{ if [ -r " + ShellQuote(f.proc+"/self/environ") + " ]; then echo $$; " +
		`else echo "$$ $(ps -o lstart= -p $$)"; fi >` + f.pidFile() + "; } 2>/dev/null; "
}

// stopScript ends the tagged processes on the far side: SIGTERM (and
// SIGCONT), up to farGrace tenths of a second for them to go, then SIGKILL
// to those left and to any tagged since. With /proc the processes are
// those whose environment holds exactly FarTagKey=tag, never the script
// itself (one `grep -z` over every environ where grep has -z, as GNU's and
// busybox's do; else two commands per process). Without /proc, they are
// the command's own process (by the pid file, if its start time still
// matches) and its descendants by `ps`: what left them (setsid and
// reparented) is out of reach then, and a live pid whose start time ps
// cannot tell is reported left. With /proc, when it finds none it looks
// at the command's pid file: missing, it is not where the command ran
// ("left= elsewhere"); naming a live process it cannot read, that is left.
// When the command still runs here (running) and its pid file is not
// there, it leaves the stop file first: the command has not started there
// yet, or runs elsewhere; if it starts there later, it ends at once. Its
// last line says what it did: "nvim-acp-stop mode=proc|ps found=N
// left=PIDS"; it exits 1 when processes are left.
func (f *Far) stopScript(running bool) string {
	run := "0"
	if running {
		run = "1"
	}
	return `t=` + f.tag + ` k=` + FarTagKey + ` proc=` + ShellQuote(f.proc) + ` me=$$ pidf=` + f.pidFile() +
		` stopf=` + f.stopFile() + ` running=` + run + `
if [ -r "$proc/self/environ" ]; then
	mode=proc
	alive() { tr '\0' '\n' <"$proc/$1/environ" 2>/dev/null | grep -qxF "$k=$t"; }
	if printf 'a\0' | grep -qzxF a 2>/dev/null; then
		tagged() {
			grep -lzxF "$k=$t" "$proc"/[0-9]*/environ 2>/dev/null | while read -r d; do
				p=${d%/environ}
				p=${p##*/}
				[ "$p" = "$me" ] || echo "$p"
			done
		}
	else
		tagged() {
			for d in "$proc"/[0-9]*; do
				p=${d##*/}
				[ "$p" != "$me" ] && alive "$p" && echo "$p"
			done
		}
	fi
else
	mode=ps
	alive() {
		s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
		case $s in ''|*Z*) return 1 ;; esac
	}
	tagged() {
		[ -r "$pidf" ] || return 0
		set -- $(cat "$pidf")
		r=$1
		[ -n "$r" ] || return 0
		shift
		want="$*"
		set -- $(ps -o lstart= -p "$r" 2>/dev/null)
		[ -n "$*" ] && [ "$*" = "$want" ] || return 0
		ps -A -o pid= -o ppid= | awk -v r="$r" '{ par[$1] = $2 }
			END { for (p in par) for (q = p; q != "" && q + 0 > 1; q = par[q]) if (q + 0 == r + 0) { print p; break } }'
	}
fi
made=
if [ $running = 1 ] && [ ! -e "$pidf" ]; then
	# Not started here yet, or not here: what starts after the mark ends.
	{ echo >"$stopf"; } 2>/dev/null && made=1
fi
pids=$(tagged)
if [ $mode = proc ] && [ -z "$pids" ]; then
	# None found: not where the command ran (no pid file: a new
	# container at each run), or its processes cannot be read here.
	[ -e "$pidf" ] || { echo "nvim-acp-stop mode=proc found=0 left= elsewhere"; exit 0; }
	set -- $(cat "$pidf" 2>/dev/null)
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null && ! tr '\0' '\n' <"$proc/$1/environ" >/dev/null 2>&1 &&
		echo "nvim-acp-stop mode=proc found=0 left= $1 (cannot be read here)" && exit 1
fi
if [ $mode = ps ] && [ -z "$pids" ] && [ -r "$pidf" ]; then
	# A live pid whose start time cannot be told (a ps without -p or
	# lstart): left, not guessed.
	set -- $(cat "$pidf")
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ -z "$(ps -o lstart= -p "$1" 2>/dev/null)" ] &&
		echo "nvim-acp-stop mode=ps found=0 left= $1 (start time unknown)" && exit 1
fi
found=0
for p in $pids; do found=$((found + 1)); done
left=
if [ -n "$pids" ]; then
	kill -TERM $pids 2>/dev/null
	kill -CONT $pids 2>/dev/null
	i=0
	while [ $i -lt ` + fmt.Sprint(f.grace) + ` ]; do
		left=
		for p in $pids; do alive "$p" && left="$left $p"; done
		[ -n "$left" ] || break
		sleep 0.1 2>/dev/null || { sleep 1; i=$((i + 9)); }
		i=$((i + 1))
	done
fi
last=
# Those left and any tagged since (none can be when none was found).
[ -z "$pids" ] || for p in $left $(tagged); do alive "$p" && last="$last $p"; done
left=
if [ -n "$last" ]; then
	kill -KILL $last 2>/dev/null
	i=0
	while [ $i -lt 10 ]; do
		left=
		for p in $last; do alive "$p" && left="$left $p"; done
		[ -n "$left" ] || break
		sleep 0.1 2>/dev/null || { sleep 1; i=$((i + 9)); }
		i=$((i + 1))
	done
fi
[ -n "$left" ] || rm -f "$pidf"
# The command's shell was found and is gone: the mark is not needed.
[ -z "$made" ] || [ -z "$pids" ] || [ -n "$left" ] || rm -f "$stopf"
echo "nvim-acp-stop mode=$mode found=$found left="$left
[ -z "$left" ]
`
}

// StopReport is what the stop script reported.
type StopReport struct {
	Text  string // its report: "mode=proc found=2 left="; "" when none came back
	Ended bool   // it found the command's processes and ended them all
}

// Stop ends the command's processes on the far side (see stopScript for
// how, and what it needs there) by running a script through the same
// prefix; ctx bounds it (the prefix's process is killed when ctx ends). It
// returns the script's report, and fails when the script did not run to
// its end or processes were left, and when the command still ran here
// (running) but the prefix lands where it did not run (a new container at
// each run: its pid file is not there).
func (f *Far) Stop(ctx context.Context, running bool) (StopReport, error) {
	text, err := f.stop(ctx, running)
	return StopReport{Text: text, Ended: endedAll(text)}, err
}

// endedAll reports whether a stop script's report says the command's
// processes were found and all ended ("found=2 left=").
func endedAll(report string) bool {
	var found, left string
	var leftSeen bool
	for _, f := range strings.Fields(report) {
		if v, ok := strings.CutPrefix(f, "found="); ok {
			found = v
		} else if v, ok := strings.CutPrefix(f, "left="); ok {
			left, leftSeen = v, true
		} else if leftSeen {
			left += " " + f // left= lists pids after it
		}
	}
	n, err := strconv.Atoi(found)
	return err == nil && n > 0 && leftSeen && left == ""
}

// stop is Stop's report as text.
func (f *Far) stop(ctx context.Context, running bool) (string, error) {
	report, err := f.stopOnce(ctx, running)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// The prefix's process here was killed under the stop (Neovim
			// quitting signals its jobs' trees as the host starts its own
			// stops): the far side was not reached or not to the end.
			// The script is safe to run again.
			report, err = f.stopOnce(ctx, running)
		}
	}
	return report, err
}

// stopOnce runs the stop script through the prefix once, and returns its
// report.
func (f *Far) stopOnce(ctx context.Context, running bool) (string, error) {
	argv := throughPrefix(f.prefix, f.stopScript(running))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = time.Second // a prefix's child holding the pipes
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// A group of its own: Neovim ending the host's group as it quits
	// must not cut the stop short (the host waits for it). Registered
	// with proctree, whose reaper would take it for an orphan.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := proctree.Start(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	if err == nil {
		err = cmd.Wait()
		proctree.Exited(cmd.Process.Pid)
	}
	text := strings.TrimSpace(out.String())
	last := text[strings.LastIndex(text, "\n")+1:]
	report, ok := strings.CutPrefix(last, "nvim-acp-stop ")
	if !ok {
		report = ""
	}
	via := "sh"
	if len(f.prefix) > 0 {
		via = filepath.Base(f.prefix[0])
	}
	switch {
	case ctx.Err() != nil:
		return report, fmt.Errorf("stop through %s: %w", via, context.Cause(ctx))
	case ok && strings.HasSuffix(report, "left="):
		if err != nil {
			return report, fmt.Errorf("stop through %s: %w (%s)", via, err, report)
		}
		return report, nil
	case ok && strings.HasSuffix(report, "left= elsewhere"):
		if running {
			return report, fmt.Errorf("stop through %s: the prefix does not reach where the command runs "+
				"(a new container at each run?): it may still run there", via)
		}
		return report, nil
	case ok:
		return report, fmt.Errorf("stop through %s: processes still run there (%s)", via, report)
	case err == nil:
		err = errors.New("no report")
	}
	return "", fmt.Errorf("stop through %s: %w: %s", via, err, truncate(text, 500))
}
