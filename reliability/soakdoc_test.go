package reliability

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/reliability-results.md opens with the release soak's summary line,
// which names the commit whose library code the soak ran. The library may
// move on between releases (the next release soaks its own final code):
// scripts/release.sh refuses to tag while a later commit changed the
// library's files and is not named in the document (where it says why no
// decision changed); this test checks the line and lists those commits.
func TestSoakLineNamesTheLibraryCode(t *testing.T) {
	b, err := os.ReadFile("../docs/reliability-results.md")
	require.NoError(t, err)
	doc := string(b)
	line := regexp.MustCompile(`(?m)^\s*soak: .*$`).FindString(doc)
	require.NotEmpty(t, line, "no soak: line")
	m := regexp.MustCompile(`^soak: code=([0-9a-f]{40}) (?:zk=[0-9.,]+ )?acquisitions=\d+ fault_exposed=\d+ faults=\d+ violations=\d+ upper95=\S+$`).FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, "the first soak: line names one commit: %q", line)
	code := m[1]
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", ".."}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := git("rev-parse", "--git-dir"); err != nil {
		t.Skip("not a git work tree")
	}
	if _, err := git("cat-file", "-e", code+"^{commit}"); err != nil {
		t.Skipf("the soak's commit %s is not in this clone (a shallow one?)", code[:12])
	}
	// The library's files as the release soak counts them (git pathspecs).
	paths, err := exec.Command("../scripts/library-paths.sh").Output()
	require.NoError(t, err)
	later, err := git(append([]string{"log", "--format=%h", "--abbrev=7", code + "..HEAD", "--"}, strings.Fields(string(paths))...)...)
	require.NoError(t, err)
	var unsoaked []string
	for _, c := range strings.Fields(later) {
		if !strings.Contains(doc, c) {
			unsoaked = append(unsoaked, c)
		}
	}
	if len(unsoaked) > 0 {
		t.Logf("library commits after the soak on %s, which the next release soak must cover (make release refuses until then): %s", code[:12], strings.Join(unsoaked, " "))
	}
}

// The first soak: line of docs/reliability-results.md is what
// cmd/soaksummary prints for one committed checkpoint under docs/soak,
// judged again where the checkpoint says so: the release's figures are the
// checkpoints', not typed by hand. It reports no violation, and that
// checkpoint ran every scenario.
func TestSoakLineSumsACommittedCheckpoint(t *testing.T) {
	b, err := os.ReadFile("../docs/reliability-results.md")
	require.NoError(t, err)
	line := strings.TrimSpace(regexp.MustCompile(`(?m)^\s*soak: .*$`).FindString(string(b)))
	require.NotEmpty(t, line, "no soak: line")
	require.Contains(t, line, " violations=0 ", "the release soak has violations")

	files, err := filepath.Glob("../docs/soak/*.jsonl")
	require.NoError(t, err)
	var lines []string
	for _, f := range files {
		recs, err := ReadRecords(f)
		require.NoError(t, err, f)
		rjs, err := ReadRejudgements(f)
		require.NoError(t, err, f)
		judged, err := ApplyRejudgements(recs, rjs)
		require.NoError(t, err, f)
		got := SummaryLine(judged)
		if got == line {
			ran := map[string]bool{}
			for _, r := range judged {
				ran[r.Name] = true
			}
			// Every scenario of the suite, and those of reliability/containers
			// (a module of its own), which make soak runs at its end.
			want := []string{"S18", "S19", "S20"}
			for _, sc := range Scenarios("soak") {
				want = append(want, sc.Name)
			}
			for _, n := range want {
				require.True(t, ran[n], "%s: the release soak never ran %s", filepath.Base(f), n)
			}
			return
		}
		lines = append(lines, filepath.Base(f)+": "+got)
	}
	t.Fatalf("no checkpoint under docs/soak sums to the first soak: line\n  %s\nthe checkpoints:\n  %s", line, strings.Join(lines, "\n  "))
}

// The checkpoints under docs/soak name their runs' timelines relative to
// their own folder: no path of the machine a soak ran on.
func TestSoakCheckpointsNameNoMachinePaths(t *testing.T) {
	files, err := filepath.Glob("../docs/soak/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		recs, err := ReadRecords(f)
		require.NoError(t, err, f)
		for _, r := range recs {
			for _, p := range append([]string{r.Timeline}, r.See...) {
				require.False(t, filepath.IsAbs(p), "%s, run %d (%s): %s", f, r.Seq, r.Name, p)
			}
		}
	}
}
