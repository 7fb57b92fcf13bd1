package reliability

import (
	"slices"
	"strings"

	"github.com/zklock/zklock/zktest"
)

// serverRelease is the ZooKeeper release of c's first member as it
// reports it ("3.9.6"), or "unknown" when it does not answer.
func serverRelease(c *zktest.Cluster) string {
	v, err := c.ServerVersion(0)
	if err != nil {
		return "unknown"
	}
	return v
}

// Releases lists the ZooKeeper releases the results ran on
// (Result.ZooKeeper), in the order first seen; nil when none names one
// (results that predate the field). One release means every run ran on it.
func Releases(rs []Result) []string {
	var out []string
	for _, r := range rs {
		if r.ZooKeeper != "" && !slices.Contains(out, r.ZooKeeper) {
			out = append(out, r.ZooKeeper)
		}
	}
	return out
}

// ReleaseField is the summary lines' "zk=3.9.6 " (several
// releases comma-separated), or "" when no result names one.
func ReleaseField(rs []Result) string {
	rel := Releases(rs)
	if rel == nil {
		return ""
	}
	return "zk=" + strings.Join(rel, ",") + " "
}

// ReleaseTitle is a page heading with the releases appended:
// "zklock soak (ZooKeeper 3.9.6)"; the heading alone when none is known.
func ReleaseTitle(heading string, rs []Result) string {
	rel := Releases(rs)
	if rel == nil {
		return heading
	}
	return heading + " (ZooKeeper " + strings.Join(rel, ", ") + ")"
}

// results are the Results of soak records.
func results(recs []SoakRecord) []Result {
	rs := make([]Result, len(recs))
	for i, r := range recs {
		rs[i] = r.Result
	}
	return rs
}
