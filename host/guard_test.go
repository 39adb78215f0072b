package host

import "testing"

func TestDestructive(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"ls -la", false},
		{"go test ./...", false},
		{"rm file.txt", false},
		{"rm -rf build", true},
		{"rm -f x", true},
		{"rm --recursive dir", true},
		{"make && rm -Rf /tmp/x", true},
		{"git status", false},
		{"git push origin main", false},
		{"git push --force origin main", true},
		{"git push -f", true},
		{"git reset --hard HEAD~1", true},
		{"git clean -fdx", true},
		{"git branch -D old", true},
		{"sudo apt install x", true},
		{"dd if=/dev/zero of=/dev/sda", true},
		{"chmod -R 777 .", true},
		{"chmod +x run.sh", false},
		{"find . -name '*.o' -delete", true},
		{"echo rm -rf", true}, // conservative: asks
		{"npm run format", false},
	} {
		if got := destructive(tc.line); got != tc.want {
			t.Errorf("destructive(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
