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
