package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestContextStress plants random passwords and tokens in random contexts
// of the kinds agents see (env files, YAML, JSON, code, command lines,
// URLs, .netrc, headers) and requires every one to be removed. The
// passwords use the symbols people and generators put in them.
func TestContextStress(t *testing.T) {
	r := newTestRedactor(t)
	rng := rand.New(rand.NewPCG(stressSeed(), 9))
	const pwChars = alnum + "-_.~!#%^*+="
	pwNames := []string{"DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASSWORD", "SMTP_PASS", "admin_password", "password", "passwd", "db_pass", "DOCKER_PASS", "Password", "userPassword", "POSTGRES_PASSWORD", "app.datasource.password"}
	tokNames := []string{"API_SECRET", "CLIENT_SECRET", "SECRET_KEY", "API_KEY", "ACCESS_TOKEN", "AUTH_TOKEN", "apiKey", "clientSecret", "access_token", "JWT_SECRET", "WEBHOOK_SECRET", "SENTRY_AUTH_TOKEN", "MISTRAL_API_KEY", "COHERE_API_KEY", "DEEPSEEK_API_KEY", "TOGETHER_API_KEY", "GEMINI_API_KEY", "private_token"}
	users := []string{"app", "admin", "deploy", "root", "svc_api", "postgres", "ci"}
	hosts := []string{"db.internal", "prod-db.example.net", "cache.example.org", "git.example.com", "10.0.0.12"}
	pwForms := []string{
		"%[1]s=%[2]s",
		"export %[1]s=%[2]s",
		"export %[1]s='%[2]s'",
		`%[1]s="%[2]s"`,
		"%[1]s: %[2]s",
		`%[1]s: "%[2]s"`,
		"%[1]s: '%[2]s'",
		`{"%[1]s": "%[2]s"}`,
		`%[1]s = "%[2]s"`,
		"%[1]s = '%[2]s'",
		`config.%[1]s = "%[2]s";`,
		`  - name: %[1]s` + "\n" + `    value: "%[2]s"`,
		`{\"%[1]s\": \"%[2]s\"}`,
		"%[1]s=%[2]s docker compose up -d",
	}
	cliForms := []string{
		"mysql -u %[3]s -p%[2]s -h %[4]s shop",
		"mysql -u %[3]s -p'%[2]s' -e 'select 1'",
		"redis-cli -h %[4]s -a '%[2]s' ping",
		"sshpass -p '%[2]s' ssh %[3]s@%[4]s",
		"curl -u %[3]s:'%[2]s' https://%[4]s/api",
		`curl --user "%[3]s:%[2]s" https://%[4]s/api`,
		"wget --user=%[3]s --password='%[2]s' https://%[4]s/a.zip",
		"psql \"postgresql://%[3]s:%[2]s@%[4]s:5432/app\"",
		"DATABASE_URL=postgres://%[3]s:%[2]s@%[4]s/app",
		"MONGO_URI=mongodb+srv://%[3]s:%[2]s@%[4]s/test?retryWrites=true",
		"amqp://%[3]s:%[2]s@%[4]s:5672/vhost",
		"git clone https://%[3]s:%[2]s@%[4]s/team/repo.git",
		"machine %[4]s login %[3]s password %[2]s",
		"machine %[4]s\n    login %[3]s\n    password %[2]s\n",
		"docker login -u %[3]s -p '%[2]s' %[4]s",
	}
	tokForms := []string{
		"%[1]s=%[2]s",
		`%[1]s: "%[2]s"`,
		`"%[1]s": "%[2]s",`,
		"%[1]s: %[2]s",
		`os.environ["%[1]s"] = "%[2]s"`,
		`client = Client(%[1]s="%[2]s")`,
		"-H 'X-API-Key: %[2]s'",
		`curl -H "Authorization: Bearer %[2]s" https://api.example.com`,
		"https://api.example.com/v1/x?%[1]s=%[2]s&page=1",
	}
	total, missed := 0, 0
	check := func(text, secret string) {
		total++
		out, _ := r.RedactString(text)
		if strings.Contains(out, secret) {
			missed++
			if missed <= 30 {
				t.Errorf("not removed: %q -> %q", text, out)
			}
		}
	}
	for range 400 {
		pw := randFrom(rng, alnum, 1) + randFrom(rng, pwChars, 8+rng.IntN(12))
		if !strings.ContainsAny(pw, digits) {
			pw += "7"
		}
		f := pwForms[rng.IntN(len(pwForms))]
		check(fmt.Sprintf(f, pwNames[rng.IntN(len(pwNames))], pw), pw)

		f = cliForms[rng.IntN(len(cliForms))]
		check(fmt.Sprintf(f, "", pw, users[rng.IntN(len(users))], hosts[rng.IntN(len(hosts))]), pw)

		tok := randMixed(rng, alnum, 24+rng.IntN(24))
		f = tokForms[rng.IntN(len(tokForms))]
		check(fmt.Sprintf(f, tokNames[rng.IntN(len(tokNames))], tok), tok)

		basic := base64.StdEncoding.EncodeToString([]byte(users[rng.IntN(len(users))] + ":" + pw))
		check(`-H "Authorization: Basic `+basic+`"`, basic)
	}
	t.Logf("context stress: %d/%d removed", total-missed, total)
}

func stressSeed() uint64 {
	if s := os.Getenv("VIGIL_STRESS_SEED"); s != "" {
		n, _ := strconv.ParseUint(s, 10, 64)
		return n
	}
	return 2024
}
