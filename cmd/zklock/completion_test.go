package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeScript writes zklock's output for args to a file and returns its path.
func writeScript(t *testing.T, name string, args ...string) string {
	t.Helper()
	code, stdout, stderr := runZklock(t, nil, args...)
	require.Equal(t, exitOK, code, stderr)
	require.Empty(t, stderr)
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(stdout), 0o644))
	return p
}

// The bash script loads (complete -p zklock names its function), and
// completes verbs, each verb's own flags, the values of the flags with a
// fixed set, and the operands, from the tables the parser uses.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	script := writeScript(t, "zklock.bash", "completion", "bash")
	out, err := exec.Command("bash", "-c", "source <(cat \"$1\") && complete -p zklock", "bash", script).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "complete -F _zklock zklock\n", string(out))

	tests := []struct {
		line string // the words before the cursor, then the word at it
		want []string
	}{
		{"zklock el", []string{"elect"}},
		{"zklock ", append(verbNameList(), "help")},
		{"zklock help se", []string{"semaphore"}},
		{"zklock --servers zk1:2181 el", []string{"elect"}},
		{"zklock -v --log-format j", []string{"json"}},
		{"zklock --log-level ", []string{"debug", "info", "warn", "error"}},
		{"zklock --on-unreachable=fail lock --on-unreachable ", []string{"fail", "run"}},
		{"zklock elect --re", []string{"--requeue", "--revocable"}},
		{"zklock elect jobs --insec", []string{"--insecure-listen"}},
		{"zklock status --re", nil},
		{"zklock status --js", []string{"--json"}},
		{"zklock semaphore --lea", []string{"--leases"}},
		{"zklock --try lock --lo", []string{"--log-format", "--log-level", "--loss-limit", "--lost-exit-code"}},
		{"zklock completion ", []string{"bash", "fish", "zsh"}},
		{"zklock completion bash ", nil},
		{"zklock fence r", []string{"rebase"}},
		{"zklock elect --http 127.0.0.1:9090 jobs -- /bin/true", []string{"/bin/true"}},
	}
	for _, tc := range tests {
		words := strings.Split(tc.line, " ")
		prog := "source \"$1\"; COMP_WORDS=(" + strings.Join(quoteAll(words), " ") + "); COMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "; _zklock; printf '%s\\n' \"${COMPREPLY[@]}\""
		out, err := exec.Command("bash", "-c", prog, "bash", script).CombinedOutput()
		require.NoError(t, err, "%s: %s", tc.line, out)
		got := strings.Fields(string(out))
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if len(want) == 0 {
			want = nil
		}
		if len(got) == 0 {
			got = nil
		}
		assert.Equal(t, want, got, "completing %q", tc.line)
	}
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellWord(w)
	}
	return out
}

// Every flag of the tables, global or a verb's, is in every script.
func TestCompletionFromTables(t *testing.T) {
	t.Parallel()
	for sh, write := range completionShells {
		var b strings.Builder
		write(&b)
		for _, f := range globalFlagDocs() {
			assert.Contains(t, b.String(), f.name, "%s: global flag %s", sh, f.name)
		}
		for _, v := range verbs {
			assert.Contains(t, b.String(), v.name, "%s: verb %s", sh, v.name)
			for _, f := range verbFlagDocs(v) {
				assert.Contains(t, b.String(), f.name, "%s: flag %s of %s", sh, f.name, v.name)
			}
		}
	}
}

// The zsh and fish scripts are valid for their shells (zsh -n, fish -n),
// and fish completes from it.
func TestCompletionZshFish(t *testing.T) {
	t.Parallel()
	t.Run("zsh", func(t *testing.T) {
		if _, err := exec.LookPath("zsh"); err != nil {
			t.Skip("zsh is not installed (apt-get install zsh): no syntax check of the zsh script")
		}
		script := writeScript(t, "_zklock", "completion", "zsh")
		out, err := exec.Command("zsh", "-n", script).CombinedOutput()
		require.NoError(t, err, "%s", out)
		// Loaded into a shell with compinit, it registers itself for zklock.
		out, err = exec.Command("zsh", "-f", "-c", "autoload -U compinit && compinit -u -D && source \"$1\" && print -r -- $_comps[zklock]",
			"zsh", script).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "_zklock\n", string(out))
	})
	t.Run("fish", func(t *testing.T) {
		if _, err := exec.LookPath("fish"); err != nil {
			t.Skip("fish is not installed (apt-get install fish): no check of the fish script")
		}
		script := writeScript(t, "zklock.fish", "completion", "fish")
		out, err := exec.Command("fish", "-n", script).CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, tc := range []struct{ line, want string }{
			{"zklock el", "elect\t"},
			{"zklock elect --req", "--requeue\t"},
			{"zklock --log-format ", "json"},
			{"zklock completion ", "fish"},
		} {
			out, err := exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, tc.line).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), tc.want, "completing %q", tc.line)
		}
		out, err = exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, "zklock status --req").CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.NotContains(t, string(out), "--requeue", "status has no --requeue")
	})
}

func TestCompletionUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "want one shell"},
		{[]string{"completion", "bash", "zsh"}, "want one shell"},
		{[]string{"completion", "bsh"}, `unknown shell "bsh" (did you mean "bash"?)`},
	} {
		code, _, stderr := runZklock(t, nil, tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}

// zklock man renders with man(1) and groff without a warning, and shows
// every verb, flag and environment variable of the tables.
func TestManPage(t *testing.T) {
	t.Parallel()
	page := writeScript(t, "zklock.1", "man")
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("groff is not installed (apt-get install groff-base): the page cannot be rendered")
	}
	out, err := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", page).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Empty(t, string(out), "groff warnings")

	render := exec.Command("groff", "-man", "-Tutf8", "-P-cbou", page)
	if _, err := exec.LookPath("man"); err == nil {
		render = exec.Command("man", "-l", page)
	}
	render.Env = append(os.Environ(), "MANWIDTH=80", "MAN_KEEP_FORMATTING=0", "PAGER=cat", "MANPAGER=cat")
	text, err := render.Output()
	require.NoError(t, err)
	s := regexp.MustCompile(".\b").ReplaceAllString(string(text), "") // overstrikes (bold, underline)
	s = strings.ReplaceAll(s, "‐\n", "")                              // hyphenation at line ends
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "‐", "-")), " ")
	for _, want := range []string{"ZKLOCK(1)", "NAME zklock - run a command while holding a ZooKeeper lock", "SYNOPSIS",
		"EXIT STATUS", "ENVIRONMENT", "126, 127"} {
		assert.Contains(t, s, want)
	}
	for _, v := range verbs {
		assert.Contains(t, s, "zklock [flags] "+v.name, "verb %s", v.name)
		for _, f := range verbFlagDocs(v) {
			assert.Contains(t, s, f.dashed(), "flag %s of %s", f.name, v.name)
		}
	}
	for _, st := range settings {
		assert.Contains(t, s, "--"+st.flag)
		if st.env != "" {
			assert.Contains(t, s, st.env)
		}
	}
}
