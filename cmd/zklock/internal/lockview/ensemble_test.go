package lockview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// cons answers as ZooKeeper 3.8 and 3.9 print them, IPv4 and IPv6 (with
// and without brackets), a connection still in its handshake, and lines
// that are none.
func TestParseCons(t *testing.T) {
	out := strings.Join([]string{
		" /127.0.0.1:54321[1](queued=0,recved=5,sent=5,sid=0x1000a2b3c4d0001,lop=PING,est=1700000000000,to=10000,lcxid=0x3,lzxid=0x10,lresp=123,llat=0,minlat=0,avglat=0,maxlat=1)",
		" /0:0:0:0:0:0:0:1:40000[1](queued=0,recved=1,sent=1,sid=0xffffffffffffffff,lop=PING)",
		" /[0:0:0:0:0:0:0:1]:40001[1](queued=0,recved=1,sent=1,sid=0x2,lop=PING)",
		" /10.0.0.7:5000[0](queued=0,recved=1,sent=0)",
		" /10.0.0.8:5001[1](sid=0xnothex)",
		"garbage", "", " /(sid=0x5)",
	}, "\n")
	assert.Equal(t, map[int64]string{0x1000a2b3c4d0001: "127.0.0.1:54321", -1: "[::1]:40000", 2: "[::1]:40001"}, parseCons(out))
	assert.Empty(t, parseCons(strings.Repeat("x", 1<<17)), "a line past the scanner's bound")
}

func TestParseSrvr(t *testing.T) {
	var m Member
	parseSrvr("Zookeeper version: 3.9.3\nLatency min/avg/max: 0/0.5397/12\nReceived: 10\nSent: 9\nConnections: 3\nOutstanding: 2\nZxid: 0x10000002a\nMode: follower\nNode count: 7\n", &m)
	assert.Equal(t, Member{Mode: "follower", Zxid: "0x10000002a", Outstanding: 2, AvgLatency: 0.5397, Connections: 3}, m)
}
