package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Names and data with C0 or C1 controls, bidi overrides or isolates, or
// bytes that are not UTF-8 never reach the terminal raw. printable used to
// pass C1 controls and bidi overrides through.
func TestTerminalOutputQuotesControls(t *testing.T) {
	for _, tc := range []struct{ in, printable, escaped string }{
		{"plain id 10.0.0.7", "plain id 10.0.0.7", "plain id 10.0.0.7"},
		{"a\tb", `"a\tb"`, `a\tb`},
		{"\x1b[2Jgone", `"\x1b[2Jgone"`, `\x1b[2Jgone`},
		{"csi\u009b2J", `"csi\u009b2J"`, `csi\u009b2J`},
		{"nel\u0085", `"nel\u0085"`, `nel\u0085`},
		{"lock-\u202efdp.exe", `"lock-\u202efdp.exe"`, `lock-\u202efdp.exe`},
		{"iso\u2066x\u2069", `"iso\u2066x\u2069"`, `iso\u2066x\u2069`},
		{"bad\xff", `"bad\xff"`, `bad\xff`},
		{"naïve ünïcode", "naïve ünïcode", "naïve ünïcode"},
	} {
		assert.Equal(t, tc.printable, printable(tc.in), "%q", tc.in)
		assert.Equal(t, tc.escaped, escapeControls(tc.in), "%q", tc.in)

		var b bytes.Buffer
		enc := json.NewEncoder(jsonSafe{&b})
		require.NoError(t, enc.Encode(map[string]string{"data": tc.in}))
		for _, r := range b.String() {
			assert.False(t, r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r < 0x20 && r != '\n',
				"%q in %q", r, b.String())
		}
		var back map[string]string
		require.NoError(t, json.Unmarshal(b.Bytes(), &back))
		if tc.in != "bad\xff" {
			assert.Equal(t, tc.in, back["data"], "the JSON means the same")
		}
	}
}
