// The command line's help text: what `factory --help` (and `factory` alone outside a terminal) prints.
import { EXIT } from '../contract/exit.js';

export const DESCRIPTION = 'factory — a terminal cockpit for AI Developer Workflows on the pi coding agent';

export const HELP = `
  Usage
    $ factory                      the cockpit home: recent runs (enter replays, r resumes)
    $ factory init [--into <repo>] set a repository up: the pi node, a roster whose gate is its test
                                   command, neutral briefs, adws/adw_data/ ignored (merges, idempotent)
    $ factory prompt "<ask>"       one ask through the typed gate (phases: prompt → dispose)
    $ factory build <spec.md>      implement a spec, judged by the roster's payload gates (check → build → gates)
    $ factory bon <spec.md>        best-of-N: one primer, N arms forked from it working at once, each in a
                                   worktree of its own, judged by the gates, ranked; your tree is left alone
                                   [--arms 3] [--models a,b,c] [--concurrency K] [--in-place] [--apply]
                                   [--max-cost 2.50] [--stop-after-green 1] [--deadline 20m] [--yes] [--judge]
    $ factory apply <adw_id> [arm] apply a bon run's sealed patch (the winner's, or the arm named) after its
                                   paths, modes and gates are checked again on the current HEAD; a red
                                   arm only with --force
    $ factory doctor [<id>…]       zero-token preflight of the workstation and the pi node
                                   [--quick] [--strict] [--json] [--gates: run the gates once on HEAD]
    $ factory doctor --layer node|station --into <repo>   install the factory's pi layer into another repo
    $ factory runs                 recent runs from the trace
    $ factory show <adw_id>        a run's phases, attempts, sessions and motifs
    $ factory resume <adw_id>      continue a failed or interrupted run in its live session (same folder only)
    $ factory clean                remove old runs' refs, patches, traces and worktree leftovers; never a
                                   running run or the last harvest not applied [--older-than 14d] [--keep 20]
                                   [--dry-run] [--json]
    $ factory demo [--dir <path>]  an offline run through the real pi and a scripted model (no key, no network)

  Options
    --model      model id (registry id, routed through the roster's gateway; provider/id)
    --harness    pi (default) or claude
    --retries    extra attempts of an agent phase, in the same live session (default 2)
    --cwd        folder to work in (default: the current folder's git top-level)
    --arms       bon: number of arms, 2 to 5 (default 3, or one per --models entry)
    --models     bon: comma-separated models, one per arm (cycled); the primer reads on the first of them
    --apply      bon: apply the verified winning patch without asking
    --concurrency  bon: arms working at once (default: two per core, at most 5); the others wait for a slot
    --in-place   bon: the arms one after another in your tree, reset after each (no worktrees)
    --unsandboxed  bon: run the worktree arms without the OS sandbox (bubblewrap, Seatbelt) on a
                 machine that has none: their writes are then limited by the fence alone
    --max-cost   bon: the run's cap in dollars (primer and arms): at 80 % the arms are told to wrap up,
                 at the cap they are stopped, the harvest ranks what exists and the run exits 3
    --stop-after-green  bon: stop the arms still at work once this many are green
    --deadline   bon: stop the arms still at work once the run is this old (90s, 20m, 1h30m)
    --yes        bon: fan out even when the forecast is above the run's cap or bon.confirm_above;
                 apply and bon --apply: apply an arm that tried something its guards refused
    --force      apply: apply an arm that ended red (named by its number), knowingly
    --judge      bon: an agent (roster role judge) orders the green arms with a reason each; the code
                 checks its order, a red arm never wins by it, and its cost is its own line
    --report     md, junit or both (md,junit): write a Markdown summary and JUnit XML of the run's
                 phases, arms and gates (into --report-dir, default adws/adw_data/reports/<adw_id>/)
    --no-notify  no bell or desktop notification (OSC 9 / OSC 777) when a run ends or waits on you
    --config     roster file (default adws/adw_config/factory.config.yaml)
    --dir        demo: keep the demo repository in this folder
    --no-ui      plain log lines on stderr, the result on stdout (also when CI is set or stdout is not a TTY)
    --json       one JSON event per line on stdout, each with "schemaVersion" (now 1) and "type"
    --version    print the version
    --help       this help

  Environment
    FACTORY_PI              the pi executable to use (default: pi on PATH, else the bundled pi)
    FACTORY_FALLBACK_MODEL  model route to relaunch on, in the same session, when the provider is down
    FACTORY_WORKTREES       where bon's worktrees go (default: <tmp>/factory-worktrees)
    .env                    provider keys, loaded once; an agent with an auth profile gets only its keys

  Exit codes
    ${EXIT.green} green · ${EXIT.failed} workflow failed (a red phase, no green arm) · ${EXIT.infrastructure} infrastructure or usage (bad flags, a
    refused check) · ${EXIT.budget} budget (a spend cap stopped the run, or a forecast above bon.confirm_above without
    --yes; a green arm's patch is still proposed) · ${EXIT.interrupted} interrupted
`;

export function helpText(): string {
  return `\n  ${DESCRIPTION}\n${HELP.replace(/\s+$/, '')}\n\n`;
}
