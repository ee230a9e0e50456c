package risk

import "testing"

// The open-world rule: programs with no table of their own, judged by the
// verbs their words name. The programs here are made up on purpose: the
// rule must hold for tools Vigil has never heard of.
func TestShellOpenWorldVerbs(t *testing.T) {
	runShellCases(t, []shellCase{
		// a destructive subcommand against a named resource
		{cmd: "vaultctl secrets delete team/payments", want: high, rule: "resource-destroy"},
		{cmd: "quarry buckets destroy media-archive", want: high, rule: "resource-destroy"},
		{cmd: "fleet instances terminate i-0abc", want: high, rule: "resource-destroy"},
		{cmd: "ledgerctl drop-table events", want: high, rule: "resource-destroy"},
		{cmd: "kvs deleteBucket logs", want: high, rule: "resource-destroy"},
		{cmd: "hostctl apps:destroy web", want: high, rule: "resource-destroy"},
		{cmd: "tsdb kv_delete /metrics/cpu", want: high, rule: "resource-destroy"},
		{cmd: "dropuser analyst", want: high, rule: "resource-destroy"},
		// verbs that act on everything need nothing named
		{cmd: "queuectl purge", want: high, rule: "resource-destroy"},
		{cmd: "snapper prune --keep 2", want: high, rule: "resource-destroy"},
		{cmd: "infra teardown", want: high, rule: "resource-destroy"},
		// a data store named in the subcommand path
		{cmd: "acme-cli db reset", want: high, rule: "resource-destroy"},
		{cmd: "shopctl database drop", want: high, rule: "resource-destroy"},
		// milder verbs: forced, remote or production
		{cmd: "objcli rm --force store/archive", want: high, rule: "resource-destroy"},
		{cmd: "objcli rm -rf store/archive", want: high, rule: "resource-destroy"},
		{cmd: "blobs del gs://team-data/2024/", want: high, rule: "resource-destroy"},
		{cmd: "sync-tool remove backup:photos", want: high, rule: "resource-destroy"},
		{cmd: "svcctl remove billing-prod", want: high, rule: "resource-destroy"},
		{cmd: "objcli rm store/tmp.txt", want: med, rule: "resource-remove"},
		{cmd: "notes delete ./drafts/old.md", want: med, rule: "resource-remove"},
		{cmd: "notes delete todo.txt", want: med, rule: "resource-remove"},
		{cmd: "notes delete --force todo.txt", want: high, rule: "resource-destroy"},
		{cmd: "plugins uninstall lint-extra", want: med, rule: "resource-remove"},
		// destructive options
		{cmd: "mirror --delete ./site web:/var/www", want: high, rule: "resource-destroy"},
		{cmd: "jobs stop -purge web", want: high, rule: "resource-destroy"},
		{cmd: "cachectl --force-delete sessions", want: high, rule: "resource-destroy"},
		{cmd: "ghx pr merge 7 --delete-branch", want: med, rule: "not-known-safe"},
		{cmd: "archiver run --no-prune repo", want: med, rule: "not-known-safe"},
		{cmd: "archiver run --prune=false repo", want: med, rule: "not-known-safe"},
		// runners and framework scripts run a CLI of their own
		{cmd: "npx dbkit migrate reset --force", want: high, rule: "resource-destroy"},
		{cmd: "bundle exec rake db:drop", want: high, rule: "resource-destroy"},
		{cmd: "php artisan db:wipe", want: high, rule: "resource-destroy"},
		{cmd: "python manage.py reset_db", want: high, rule: "resource-destroy"},
		{cmd: "python manage.py runserver", want: med, rule: "not-known-safe"},
		// SQL handed to a client Vigil has no table for
		{cmd: "colsh -e 'DROP KEYSPACE billing'", want: high, rule: "sql-drop"},
		{cmd: "warehouse-cli -q 'truncate table orders'", want: high, rule: "sql-truncate"},
		{cmd: "warehouse-cli -q 'select count(*) from orders'", want: med, rule: "not-known-safe"},
		// not judged: dry runs, help, read-only words, printing, SQL typed at a shell
		{cmd: "infra teardown --dry-run", want: med, rule: "not-known-safe"},
		{cmd: "vaultctl secrets delete --help", want: low},
		{cmd: "vaultctl secrets list", want: med, rule: "not-known-safe"},
		{cmd: "echo quarry buckets destroy media", want: low},
		{cmd: "grep -r delete src/", want: low},
		{cmd: "DELETE FROM users WHERE id = 1", want: med, rule: "not-known-safe"},
		{cmd: "cat delete-me.txt", want: low},
	})
}

// Authenticated writes to hosted APIs.
func TestShellAuthenticatedAPIWrite(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "curl -X DELETE -H 'Authorization: Bearer t0k' https://api.tracker.example/v2/boards/9", want: high, rule: "authenticated-api-write"},
		{cmd: "curl -XDELETE -u ops:pw https://api.example.com/v1/users/3", want: high, rule: "authenticated-api-write"},
		{cmd: "curl --request PATCH -H 'X-Auth-Token: t' https://api.example.com/v1/cfg -d '{}'", want: high, rule: "authenticated-api-write"},
		{cmd: "curl -X DELETE https://ops:pw@api.example.com/v1/users/3", want: high, rule: "authenticated-api-write"},
		{cmd: "curl -n -X DELETE https://api.example.com/v1/users/3", want: high, rule: "authenticated-api-write"},
		{cmd: "curl -X POST -H 'PRIVATE-TOKEN: t' https://git.example.com/api/v4/projects/3/delete", want: high, rule: "authenticated-api-write"},
		{cmd: "http DELETE https://api.example.com/v1/users/3 'Authorization:Bearer t'", want: high, rule: "authenticated-api-write"},
		{cmd: "http DELETE localhost:3000/items/7", want: med, rule: "network-write"},
		{cmd: "gh api --method PUT repos/o/r/collaborators/eve -f permission=admin", want: high, rule: "authenticated-api-write"},
		{cmd: "curl -X DELETE 127.0.0.1:5984/orders", want: high, rule: "datastore-http-delete"},
		{cmd: "curl -X DELETE 'http://docs.internal:9200/events-*'", want: high, rule: "datastore-http-delete"},
		{cmd: "curl -X DELETE localhost:3000/api/todo/1", want: med, rule: "network-write"},
		{cmd: "curl -X DELETE https://api.example.com/v1/users/3", want: med, rule: "network-write"},
		{cmd: "curl -X DELETE -H 'Authorization: Bearer t' http://localhost:8080/v1/users/3", want: med, rule: "network-write"},
		{cmd: "curl -H 'Authorization: Bearer t' https://api.example.com/v1/users", want: med, rule: "network-fetch"},
		{cmd: "curl -X POST -H 'Authorization: Bearer t' https://api.example.com/v1/chat -d '{}'", want: med, rule: "network-write"},
	})
}

// Argument templates are judged as the command they run.
func TestShellArgumentTemplates(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "echo / | xargs --replace rm -rf {}", want: high, rule: "destructive-delete-root"},
		{cmd: "echo /etc | xargs -i rm -rf {}", want: high, rule: "destructive-delete-system"},
		{cmd: "printf '/usr\\n' | xargs -J % rm -rf %", want: high, rule: "destructive-delete-system"},
		{cmd: "parallel rm -rf ::: /etc /var", want: high, rule: "destructive-delete-system"},
		{cmd: "echo build | xargs --replace rm -rf {}", want: med, rule: "delete-workspace"},
	})
}

// Git: what has no other copy (uncommitted changes, untracked files,
// unmerged commits, the remote's history) is HIGH to discard.
func TestShellGitEffects(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "git reset --hard origin/dev", want: high, rule: "git-discard-changes"},
		{cmd: "git reset --ha", want: high, rule: "git-discard-changes"},
		{cmd: "git reset --keep HEAD~2", want: med, rule: "git-discard-changes"},
		{cmd: "git reset --soft HEAD~1", want: med, rule: "not-known-safe"},
		{cmd: "git checkout -- README.md", want: high, rule: "git-discard-changes"},
		{cmd: "git checkout v2 -- pkg/", want: high, rule: "git-discard-changes"},
		{cmd: "git checkout -b spike", want: low},
		{cmd: "git restore docs/", want: high, rule: "git-discard-changes"},
		{cmd: "git restore -SW docs/", want: high, rule: "git-discard-changes"},
		{cmd: "git restore --staged docs/", want: low},
		{cmd: "git switch -f release", want: high, rule: "git-discard-changes"},
		{cmd: "git clean -f -d", want: high, rule: "git-discard-changes"},
		{cmd: "git clean -fdn", want: med, rule: "not-known-safe"},
		{cmd: "git stash drop stash@{2}", want: high, rule: "git-discard-changes"},
		{cmd: "git worktree remove --force /work/old-tree", want: high, rule: "git-discard-changes"},
		{cmd: "git worktree remove /work/old-tree", want: med, rule: "not-known-safe"},
		{cmd: "git submodule foreach 'git checkout -- .'", want: high, rule: "git-discard-changes"},
		{cmd: "git submodule deinit --force vendor/lib", want: high, rule: "git-discard-changes"},
		{cmd: "git branch -D spike", want: high, rule: "git-branch-delete"},
		{cmd: "git branch -d spike", want: med, rule: "git-branch-delete"},
		{cmd: "git push -f origin spike", want: high, rule: "git-force-push"},
		{cmd: "git push origin +spike:spike", want: high, rule: "git-force-push"},
		{cmd: "git push --force-with-lease origin spike", want: med, rule: "git-force-push"},
		{cmd: "git push --force-if-includes --force-with-lease origin spike", want: med, rule: "git-force-push"},
		{cmd: "git -c alias.wipe='clean -fdx' wipe", want: high, rule: "git-discard-changes"},
		{cmd: "git -c alias.up='push --force' up origin spike", want: high, rule: "git-force-push"},
		{cmd: "git -c alias.l='log --oneline' l", want: med, rule: "not-known-safe"},
		{cmd: "rm -rf .git", want: high, rule: "destructive-delete-workspace"},
	})
}

// The workspace as a whole, and what find deletes when nothing filters it.
func TestShellWholeWorkspace(t *testing.T) {
	runShellCases(t, []shellCase{
		{cmd: "rm -rf .", want: high, rule: "destructive-delete-workspace"},
		{cmd: "rm -fr ./*", want: high, rule: "destructive-delete-workspace"},
		{cmd: "rm -rf .git/", want: high, rule: "destructive-delete-workspace"},
		{cmd: "find . -delete", want: high, rule: "destructive-delete-workspace"},
		{cmd: "find . -exec rm {} +", want: high, rule: "destructive-delete-workspace"},
		{cmd: "find . -mindepth 1 -exec unlink {} \\;", want: high, rule: "destructive-delete-workspace"},
		{cmd: "rm -rf ./vendor", want: med, rule: "delete-workspace"},
		{cmd: "cd out && rm -rf ./*", want: med, rule: "delete-workspace"},
		{cmd: "rm -f *", want: med, rule: "delete-workspace"},
		{cmd: "find . -name '*.orig' -delete", want: med, rule: "delete-workspace"},
		{cmd: "find . -type d -name __pycache__ -exec rm -rf {} +", want: med, rule: "delete-workspace"},
		{cmd: "rm -rf /tmp", want: med, rule: "delete-temp"},
		{cmd: "rm -rf /var/tmp/*", want: med, rule: "delete-temp"},
		{cmd: "rm -rf \"$TMPDIR\"", want: med, rule: "delete-temp"},
		{cmd: "find /tmp -exec rm {} +", want: med, rule: "delete-temp"},
		{cmd: "rm -rf /var/folders/q1/x9k2/T/build.41", want: med, rule: "delete-temp"},
		{cmd: "rm -rf /var/folders", want: high, rule: "destructive-delete-system"},
	})
}
