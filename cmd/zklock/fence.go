package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
)

// fenceOpts are the fence verb's flags.
type fenceOpts struct {
	from, to, table string
	fromSet, toSet  bool
}

// eraFlag is an era flag that remembers whether it was given, so that an
// explicitly empty --from (a row written before eras) differs from none.
type eraFlag struct {
	v   *string
	set *bool
}

func (f eraFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f eraFlag) Set(s string) error { *f.v, *f.set = s, true; return nil }

var fenceVerb = &verb{
	name: "fence", args: "era | rebase --from OLD --to NEW [--table T] RESOURCE...",
	summary: "the ensemble's era; the SQL that moves fenced resources to a rebuilt ensemble",
	run:     runFence, pathless: true, operands: true,
	flags: func(fs *flag.FlagSet, o *verbOpts) {
		fs.Var(eraFlag{&o.fence.from, &o.fence.fromSet}, "from", "rebase: the era the resources are fenced in (the old ensemble's; '' for rows written before eras)")
		fs.Var(eraFlag{&o.fence.to, &o.fence.toSet}, "to", "rebase: the era to move them to: the ensemble's now (zklock fence era)")
		fs.StringVar(&o.fence.table, "table", fence.DefaultTable, "rebase: the fencing table")
	},
	about: "fence era prints the era of the ensemble --servers names: the id in\n" +
		zklock.EnsemblePath + ", created if missing. A fence (package fence) records it beside\n" +
		"each resource's greatest token, and refuses tokens of another era.\n" +
		"\n" +
		"fence rebase, after the ensemble was rebuilt from empty, prints the SQL that\n" +
		"moves each RESOURCE from era OLD to era NEW, for the database's own client\n" +
		"(one statement: every resource or none; then a SELECT to read the result).\n" +
		"It connects first, and refuses (exit 2) unless NEW is the ensemble's era now\n" +
		"and OLD is not: from then on the new ensemble's holders pass, and the old\n" +
		"one's are refused whatever their tokens. See the README's fencing section.",
	example: "zklock fence era\n" +
		"zklock fence rebase --from 6f1c... --to 0b7e... reports | psql -v ON_ERROR_STOP=1 \"$DSN\"\n" +
		"zklock fence rebase --from 6f1c... --to 0b7e... reports | sqlite3 -bail app.db",
}

// runFence is `zklock fence era|rebase`.
func runFence(a *app, inv *invocation) int {
	args, o := inv.cmd, inv.opts.fence
	if len(args) == 0 {
		return a.fail(usagef("fence: missing era or rebase"))
	}
	switch sub := args[0]; {
	case sub == "era" && len(args) == 1 && !o.fromSet && !o.toSet:
	case sub == "era":
		return a.fail(usagef("fence era takes no arguments or flags"))
	case sub != "rebase":
		return a.fail(usagef("fence: unknown %q (era, rebase)", sub))
	case !o.fromSet || !o.toSet:
		return a.fail(usagef("fence rebase: name both eras, --from OLD and --to NEW"))
	case len(args) == 1:
		return a.fail(usagef("fence rebase: name the RESOURCEs to move"))
	}
	f, err := fence.New(fence.WithTable(o.table))
	if err != nil {
		return a.fail(usagef("fence: %v", err))
	}
	var script string
	if args[0] == "rebase" {
		// Checked before connecting: bad eras, names or table are usage errors.
		if script, err = f.RebaseSQL(o.from, o.to, args[1:]...); err != nil {
			return a.fail(usagef("fence rebase: %v", err))
		}
	}
	var era string
	if _, err := a.oneShot(inv, func(ctx context.Context, s *zklock.Session) error {
		era, err = s.Era(ctx)
		return err
	}); err != nil {
		a.errorf("fence: the ensemble's era: %v", err)
		return exitCode(err)
	}
	switch {
	case args[0] == "era":
		fmt.Fprintln(a.stdout, era)
		return exitOK
	case o.to != era: // and so --from, another era, is not the ensemble's
		return a.fail(usagef("fence rebase: --to %s is not the ensemble's era, %s: rebase only onto the ensemble the holders use now", o.to, era))
	}
	fmt.Fprint(a.stdout, script)
	return exitOK
}
