package reliability

import (
	"fmt"
	"os"
	"testing"
)

func TestZZDump(t *testing.T) {
	out := os.Getenv("TL_DUMP")
	if out == "" {
		t.Skip()
	}
	h := &hist{}
	h.acq("w1", 1, 0, 10, 300, 100).acq("w2", 1, 5, 200, 400, 200).acq("w1", 2, 310, 420, 500, 300).acq("w3", 1, 50, 510, 0, 400)
	h.add(600, Event{Kind: KindLoss, Worker: "w3", Client: 1, Op: 1, Err: "zklock: lock lost"})
	h.add(650, Event{Kind: KindRelease, Worker: "w3", Client: 1, Op: 1})
	h.add(20, Event{Kind: KindInvoke, Worker: "w2", Client: 2, Op: 1})
	h.add(90, Event{Kind: KindFail, Worker: "w2", Client: 2, Op: 1, Err: "context deadline exceeded"})
	h.add(550, Event{Kind: KindState, Worker: "w3", Client: 1, Session: 0x100 + 400, Name: "suspended"})
	h.fault(FaultBlackholeClient, "w3", 540, 700)
	hh := Analyze(*h)
	vs := CheckExclusion(hh, cfg)
	WriteTimeline(out+"/small", "T1", "hand-made", hh, vs)
	h = &hist{}
	for i := range int64(10000) {
		w := fmt.Sprintf("w%d", i%4+1)
		start := i * 3
		h.acq(w, i+1, start, start+1, start+3, 1000+i)
	}
	h.fault(FaultPauseClient, "w2", 12000, 15000)
	hh = Analyze(*h)
	WriteTimeline(out+"/long", "long", "10k", hh, []Violation{{"C1", "w2/1/4001: made up", hh.Start() + 12000e6, hh.Start() + 12100e6}})
}
