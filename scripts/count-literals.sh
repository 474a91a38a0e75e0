#!/bin/sh
# Names written as strings where a typed reference should be used (issue 28, "one name, one meaning").
#
#  1. process-name literals: a process name (from the registry, src/common/processes.ts) written in quotes, or as a
#     quoted prefix ('hook-repair:…', `feed-poll-${…}`), in src/ or bench/, outside the registry;
#  2. message-name literals: an Update, Signal or Query called by a string name instead of its definition
#     (`.query('status')`, `signal: 'report'`, `executeUpdateWithStart('acquire', …)`; src/, bench/, test/), or a name only a message
#     has ('pollFeed', 'import-credentials', …) quoted outside its one `define…()` (src/, bench/);
#  3. workflow types started by a string name (`workflow.start('orgMigration', …)`, `executeChild('…')`,
#     `new WithStartWorkflowOperation('…')`) in src/,
#     bench/ and test/, or a Schedule's `workflowType: '…'` in src/ and bench/;
#  4. message names defined more than once (each should have one `define…()`).
# Comment lines are left out, and lines marked `count-literals: allowed` (with the reason beside it). `npm run count:literals` prints each list and its count; `-q` only the counts.
cd "$(dirname "$0")/.." || exit 2
quiet=false
[ "$1" = "-q" ] && quiet=true

code() { grep -rnE "$1" $2 --include='*.ts' --include='*.js' --include='*.mjs' | grep -vE '^[^:]+:[0-9]+:\s*(\*|//|/\*)' | grep -v 'count-literals: allowed'; }
show() {
  n=$(printf '%s' "$2" | grep -c .)
  echo "$1: $n"
  if ! $quiet && [ "$n" -gt 0 ]; then printf '%s\n' "$2" | sed 's/^/  /'; fi
}

names=${LONGHAUL_PROCESS_NAMES:-$(sed -nE "s/^  [A-Za-z]+: '([a-z-]+)',.*/\1/p" src/common/processes.ts | paste -sd'|')}
processes=$(code "['\"\`](${names})(['\"\`:]|-\\$\\{)" 'src bench' | grep -v '^src/common/processes.ts:')
show 'process-name literals' "$processes"

defined=$(grep -rhoE "define(Query|Signal|Update)(<[^(]*>)?\\('[^']+'\\)" src | sed -E "s/.*\\('([^']+)'\\)/\\1/" | sort -u)
distinct=$(printf '%s\n' "$defined" | grep -E '[-A-Z]|^acquire$' | paste -sd'|')
calls="(\\.query|\\.signal|Update|getUpdateHandle|setHandler)(<[^()]*>)?\\(\\s*['\"\`]|signal: *['\"\`]"
messages=$( (code "$calls" 'src bench test'; [ -n "$distinct" ] && code "['\"\`](${distinct})['\"\`]" 'src bench') | grep -vE 'define(Query|Signal|Update)(<[^(]*>)?\(' | sort -u)
show 'message-name literals' "$messages"

types=$(code "workflow\\.(start|execute|signalWithStart)(<[^()]*>)?\\(\\s*['\"\`]|(WithStartWorkflowOperation|executeChild|startChild)(<[^()]*>)?\\(\\s*['\"\`]" 'src bench test'; code "workflowType: *['\"\`]" 'src bench')
show 'workflow types by string' "$types"

twice=$(grep -rhoE "define(Query|Signal|Update)(<[^(]*>)?\\('[^']+'\\)" src | sed -E "s/.*\\('([^']+)'\\)/\\1/" | sort | uniq -c | awk '$1 > 1 { print $2 " defined " $1 " times" }')
show 'message names defined more than once' "$twice"
