package zktest

// Held is the number of frames the proxy has read and not yet forwarded
// (or dropped), for tests that must know a frame is queued.
func (p *Proxy) Held() int64 { return p.held.Load() }

// LagEvents counts the syncs, ends and snapshots of member i's streams
// from a leader (see SetLag); -1 without quorum relays. A lag measured
// while it does not change was held throughout.
func (c *Cluster) LagEvents(i int) int64 {
	lb, ok := c.ctl.(*localBackend)
	if !ok || lb.relays == nil {
		return -1
	}
	return lb.relays.events[i].Load()
}
