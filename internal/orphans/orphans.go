// Package orphans records the server processes a test binary starts, so
// that a later run can kill those whose owner died without cleaning up (a
// test binary that was itself SIGKILLed runs no cleanup, and Pdeathsig
// fires only when the thread that started the server exits). zktest and
// pgtest keep one Book each.
package orphans

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// A Book is a directory of pid files, one per recorded server, named after
// its pid and holding the pid and start time of the process that owns it
// and the server's directory. The directory and its files are writable by
// every user, so that test binaries of different users share it.
type Book struct {
	Dir string
	// Marker returns what the command line of the server recorded with
	// directory dir contains, as one argument; Reap kills only such a
	// server, so a recycled pid is never hit.
	Marker func(dir string) string
	// Gone, if not nil, is called by Reap with the directory of every
	// record of a gone owner, before the record is removed.
	Gone func(dir string)
}

// Add records the server pid that owns dir, with this process as its
// owner, and returns the record's path ("" if it could not be written).
func (b Book) Add(pid int, dir string) string {
	if err := os.MkdirAll(b.Dir, 0o777); err != nil {
		return ""
	}
	path := filepath.Join(b.Dir, strconv.Itoa(pid))
	body := fmt.Sprintf("owner %d %s\ndir %s\n", os.Getpid(), ProcStart(os.Getpid()), dir)
	if os.WriteFile(path, []byte(body), 0o666) != nil {
		return ""
	}
	return path
}

// Remove deletes a record made by Add; "" is no record.
func Remove(path string) {
	if path != "" {
		os.Remove(path)
	}
}

// Reap SIGKILLs (process group and process) every recorded server whose
// owner is gone and whose command line still contains Marker(dir); then
// it calls Gone(dir), if not nil, and removes the record. It returns the
// pids it killed.
func (b Book) Reap() []int {
	var killed []int
	eachPid(b.Dir, func(pid int, name string) {
		path := filepath.Join(b.Dir, name)
		body, err := os.ReadFile(path)
		if err != nil {
			return
		}
		owner, ownerStart, dir := parse(string(body))
		if Alive(owner, ownerStart) {
			return // the owner lives: its cleanup stops the server
		}
		if dir != "" && bytes.Contains(ProcCmdline(pid), []byte(b.Marker(dir)+"\x00")) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
		if dir != "" && b.Gone != nil {
			b.Gone(dir)
		}
		os.Remove(path)
	})
	return killed
}

// Scan returns the sorted pids of the live (non-zombie) processes whose
// command line matches.
func Scan(match func(cmdline []byte) bool) []int {
	var pids []int
	eachPid("/proc", func(pid int, _ string) {
		cl := ProcCmdline(pid)
		if len(cl) == 0 || !match(cl) {
			return
		}
		if f, ok := stat(pid); ok && len(f) > 0 && strings.HasPrefix(f[0], "Z") {
			return
		}
		pids = append(pids, pid)
	})
	sort.Ints(pids)
	return pids
}

// eachPid calls f, in directory order, with every entry of dir whose name
// is a number, and that number.
func eachPid(dir string, f func(pid int, name string)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			f(pid, e.Name())
		}
	}
}

func parse(body string) (owner int, ownerStart, dir string) {
	for _, line := range strings.Split(body, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "owner":
			owner, _ = strconv.Atoi(f[1])
			ownerStart = f[2]
		case len(f) >= 2 && f[0] == "dir":
			dir = strings.TrimPrefix(line, "dir ")
		}
	}
	return owner, ownerStart, dir
}

// ProcStart returns the start time of pid in clock ticks since boot (field
// 22 of /proc/<pid>/stat), or "" when no such process runs (a zombie
// counts as gone: its cleanup will never run). With the pid it names a
// process uniquely, so a recycled pid is not taken for an owner.
func ProcStart(pid int) string {
	f, _ := stat(pid)
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[19] // the fields after "(comm)" start at field 3
}

// Alive reports whether the process that ProcStart called start runs:
// pid is running and started at start (not "").
func Alive(pid int, start string) bool {
	return pid > 0 && start != "" && ProcStart(pid) == start
}

// stat returns the fields of /proc/<pid>/stat after "(comm)", from the
// state (field 3) on; ok is false when the file cannot be read or has no
// "(comm)".
func stat(pid int) (fields []string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// ProcCmdline returns the NUL-separated command line of pid, or nil.
func ProcCmdline(pid int) []byte {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return b
}

// Stopped reports whether every thread of pid is stopped (SIGSTOP has
// taken effect: the kernel stops a process's threads one by one, each when
// it next runs, so a signalled process may answer for a while under load).
// known is false where /proc cannot tell (no such process, or no /proc).
func Stopped(pid int) (stopped, known bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false, false
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if err != nil {
			continue // the thread exited
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return false, false
		}
		if s := b[i+2]; s != 'T' && s != 't' {
			return false, true
		}
	}
	return true, true
}
