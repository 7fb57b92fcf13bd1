package zktest

// Held is the number of frames the proxy has read and not yet forwarded
// (or dropped), for tests that must know a frame is queued.
func (p *Proxy) Held() int64 { return p.held.Load() }
