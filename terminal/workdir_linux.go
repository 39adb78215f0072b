package terminal

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// openedPath is where the opened directory f is, as the kernel says.
func openedPath(f *os.File, _ string) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return "", err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return "", err
	}
	if st.Nlink == 0 || !strings.HasPrefix(p, "/") {
		return "", errors.New("the directory was removed")
	}
	return p, nil
}

// dirRef is the name by which this process and a child it forks (until
// the child's exec) reach exactly the opened directory.
func (d *WorkDir) dirRef() string {
	return "/proc/self/fd/" + strconv.Itoa(int(d.f.Fd()))
}
