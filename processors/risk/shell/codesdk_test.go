package shell

import (
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/events"
	"github.com/vigil-dev/vigil/processors/risk/core"
)

// Client-library calls score as the commands they amount to; listings,
// local databases and single reads do not.
func TestClientLibraryCalls(t *testing.T) {
	for _, tc := range []struct {
		code string
		rule string // a reason the code must carry ("" for none HIGH)
	}{
		{"import boto3\nboto3.client('rds').delete_db_instance(DBInstanceIdentifier='prod', SkipFinalSnapshot=True)", "cloud-delete"},
		{"import boto3\nrds = boto3.client('rds')\nprint(rds.describe_db_instances())", ""},
		{"import boto3\ns3 = boto3.resource('s3')\ns3.Bucket('logs-prod').object_versions.all().delete()", "cloud-delete"},
		{"import boto3\nboto3.resource('s3').Bucket('logs-prod').download_file('a', 'b')", ""},
		{"from git import Repo\nRepo('.').git.push('origin', '+main')", "git-force-push-protected"},
		{"from git import Repo\nRepo('.').remote('origin').push('main', force=True)", "git-force-push"},
		{"import mysql.connector\nc = mysql.connector.connect(host='orders-db.example.net', user='app')\nc.cursor().execute(\"DELETE FROM orders\")", "sql-delete-all"},
		{"import sqlite3\nc = sqlite3.connect('app.db')\nc.execute('DELETE FROM sessions')", ""},
		{"import redis\nredis.StrictRedis(host='10.0.4.2').flushdb()", "datastore-wipe"},
		{"from kubernetes import client\nclient.AppsV1Api().delete_namespaced_deployment('api', 'prod')", "cluster-delete"},
		{"from kubernetes import client\nprint(client.AppsV1Api().read_namespaced_deployment('api', 'prod'))", ""},
		{"import github\ng = github.Github('t')\nfor r in g.get_user().get_repos():\n    r.delete()", "bulk-remote-delete"},
		{"import github\ng = github.Github('t')\nfor r in g.get_user().get_repos():\n    print(r.name)", ""},
		{"import shopify\nfor p in shopify.Product.find():\n    p.destroy()", "bulk-remote-delete"},
	} {
		finds := analyzeCodeRun("python", tc.code, core.Env{Workspace: "/home/dev/project"}, nil)
		high, has := false, tc.rule == ""
		var why []string
		for _, f := range finds {
			why = append(why, f.ID()+" "+string(f.Level))
			if f.Level == events.RiskHigh {
				high = true
				if f.ID() == tc.rule {
					has = true
				}
			}
		}
		if tc.rule == "" && high || tc.rule != "" && !has {
			t.Errorf("%q: %s (want %q HIGH)", tc.code, strings.Join(why, ", "), tc.rule)
		}
	}
}

// Code past maxCode is not read (its expressions cost seconds a MiB, and
// the driver folds one record at a time): the action is HIGH, and says so,
// whatever the padding hides after the cap.
func TestHugeCodeIsJudgedByAPerson(t *testing.T) {
	code := strings.Repeat("x = 1\n", maxCode/6+1) + "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))\n"
	finds := analyzeCodeRun("python", code, core.Env{}, nil)
	for _, f := range finds {
		if f.ID() == "input-too-large" && f.Level == events.RiskHigh {
			return
		}
	}
	t.Fatalf("a %d KiB code cell: %v", len(code)>>10, finds)
}

// FuzzClientLibraryCalls: the code analyzer, client-library translations
// included, never panics on any code, and judges the same code the same
// way twice.
func FuzzClientLibraryCalls(f *testing.F) {
	for _, s := range []string{
		"import boto3\nboto3.client('ec2').terminate_instances(InstanceIds=['i-1'])",
		"import git\ngit.Repo('.').git.push('--force', 'origin', 'main')",
		"import psycopg2\nc = psycopg2.connect(host='db.example.net')\nc.cursor().execute('DROP TABLE t')",
		"import stripe\nfor c in stripe.Customer.list():\n    stripe.Customer.delete(c.id)",
		"import requests\nrequests.delete('https://api.example.com/x', headers={'Authorization': 't'})",
		"from kubernetes import client\nclient.CoreV1Api().delete_namespaced_pod('p', 'ns')",
		"for x in y.list(:\n", ".delete(", "boto3.client('", "'''", "execute(\"\"\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		a := analyzeCodeRun("python", code, core.Env{}, nil)
		b := analyzeCodeRun("python", code, core.Env{}, nil)
		if len(a) != len(b) {
			t.Fatalf("%q: %d findings, then %d", code, len(a), len(b))
		}
		for i := range a {
			if a[i].ID() != b[i].ID() || a[i].Level != b[i].Level {
				t.Fatalf("%q: finding %d is %s %s, then %s %s", code, i, a[i].ID(), a[i].Level, b[i].ID(), b[i].Level)
			}
		}
	})
}
