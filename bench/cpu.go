package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cpuMillis returns the user+system CPU time of process pid ("self" for
// this one) in milliseconds, or -1 if it cannot be read (not Linux, gone).
func cpuMillis(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	if i < 0 || i+2 > len(s) {
		return -1
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return (u + st) * 1000 / 100 // USER_HZ is 100 on Linux
}

// serverPID finds the ZooKeeper server that this process started (zktest
// marks it with -Dzktest.owner=<our pid>) and listens on addr's port; ""
// if there is none (an external server).
func serverPID(addr string) string {
	_, port, _ := strings.Cut(addr, ":")
	owner := "-Dzktest.owner=" + strconv.Itoa(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		var ours, zk bool
		var cfg string
		for _, a := range args {
			ours = ours || a == owner
			zk = zk || strings.HasPrefix(a, "org.apache.zookeeper.server")
			if strings.HasSuffix(a, ".cfg") {
				cfg = a
			}
		}
		if !ours || !zk {
			continue
		}
		if c, err := os.ReadFile(cfg); err == nil && strings.Contains(string(c), "clientPort="+port) {
			return filepath.Base(d)
		}
	}
	return ""
}

// cpuMeter measures the CPU used by the server and the client per operation.
type cpuMeter struct {
	server, client string
	s0, c0         float64
}

func (m *cpuMeter) start() { m.s0, m.c0 = cpuMillis(m.server), cpuMillis(m.client) }

// stop fills r's CPU fields (milliseconds per operation; 0 if unknown).
func (m *cpuMeter) stop(r *Run) {
	if m.server != "" && m.s0 >= 0 && r.Ops > 0 {
		if s1 := cpuMillis(m.server); s1 >= 0 {
			r.ServerCPU = (s1 - m.s0) / float64(r.Ops)
		}
	}
	if m.client != "" && m.c0 >= 0 && r.Ops > 0 {
		if c1 := cpuMillis(m.client); c1 >= 0 {
			r.ClientCPU = (c1 - m.c0) / float64(r.Ops)
		}
	}
}
