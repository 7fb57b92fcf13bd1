package reliability

// FaultThrottleClient: a worker process stopped and continued in short
// bursts (SIGSTOP/SIGCONT), a CPU-starved or throttled holder rather than
// one stopped once (S21).
const FaultThrottleClient = "throttle-client"
