package fence_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEExample keeps the README's "Fencing your database" snippet the
// same as writeReport in example_test.go, which Example runs: the snippet
// must appear there verbatim.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, section, found := strings.Cut(string(readme), "\n## Fencing your database\n")
	require.True(t, found, "README.md has no section \"## Fencing your database\"")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, found := strings.Cut(section, "```go\n")
	require.True(t, found, "the section has no Go block")
	block, _, found = strings.Cut(block, "```\n")
	require.True(t, found, "the Go block does not end")

	example, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	require.Contains(t, string(example), block, "README.md's fencing snippet differs from writeReport in example_test.go")
}
