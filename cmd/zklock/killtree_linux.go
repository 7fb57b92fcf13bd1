//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procID names one process: its pid and its start time (clock ticks since
// boot), which together are not reused.
type procID struct {
	pid   int
	start uint64
}

// killDescendants sends SIGKILL to every live process descended from root
// (not root itself, which must be a child subreaper), in rounds until two
// rounds in a row find none it has not killed. It ends: a process with
// SIGKILL pending forks no more, so a round finds only what processes
// unkilled in the one before had started. The second empty round covers a
// process whose parent was reaped while a round read /proc (it is root's
// child by the next). What it may not kill (another user's) it leaves.
func killDescendants(root int) {
	killed := map[procID]bool{}
	for empty := 0; empty < 2; {
		empty++
		for _, p := range descendants(root) {
			if !killed[p] {
				killed[p] = true
				empty = 0
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	}
}

// descendants lists the live (not zombie) processes descended from root,
// as /proc shows them now.
func descendants(root int) []procID {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procID{}
	live := map[procID]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, start, zombie, ok := procStat(pid)
		if !ok {
			continue // gone meanwhile
		}
		id := procID{pid, start}
		children[ppid] = append(children[ppid], id)
		live[id] = !zombie
	}
	var out []procID
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			queue = append(queue, c.pid)
			if live[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// procStat reads the parent, start time and state of pid from
// /proc/PID/stat ("pid (comm) state ppid ..." with the start time the
// 22nd field; comm may hold spaces and parentheses, so the fields are
// counted from the last ')').
func procStat(pid int) (ppid int, start uint64, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return 0, 0, false, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false, false
	}
	return ppid, start, f[0][0] == 'Z' || f[0][0] == 'X', true
}
