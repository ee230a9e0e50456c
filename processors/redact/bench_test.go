package redact

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/vigil-dev/vigil/events"
)

// typicalLines are the kinds of text agent events carry: code being read or
// written, shell commands, build and test logs, tool-call JSON, chat. Many
// hold the rule keywords (key, token, password, auth, secret, api, curl)
// without a secret, as real code does; a few hold a secret.
var typicalLines = []string{
	`func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {`,
	`	token, err := s.auth.Issue(r.Context(), user.ID, 24*time.Hour)`,
	`	if err != nil { http.Error(w, "cannot issue token", http.StatusInternalServerError); return }`,
	`	key := cacheKey(user.ID, "profile")`,
	`	for key, value := range headers { req.Header.Set(key, value) }`,
	`def get_api_client(settings):`,
	`    api_key = os.environ.get("OPENAI_API_KEY")`,
	`    return Client(api_key=api_key, timeout=settings.timeout)`,
	`    password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())`,
	`const { data } = await axios.get(` + "`${baseUrl}/v1/items?page=${page}`" + `, { headers: { Authorization: ` + "`Bearer ${token}`" + ` } });`,
	`export function useAuth() { const [session, setSession] = useState(null); return { session, setSession }; }`,
	`$ go test ./... -run TestAuth -count=1`,
	`ok  	github.com/acme/api/internal/auth	0.412s`,
	`--- FAIL: TestTokenRefresh (0.01s)`,
	`    auth_test.go:88: got status 401, want 200 (token expired)`,
	`$ git log --oneline -5`,
	`a3f9c21 fix(auth): refresh tokens before expiry`,
	`$ curl -s http://localhost:8080/healthz | jq .`,
	`{"status":"ok","uptime":"3h12m","version":"1.24.3"}`,
	`$ kubectl get pods -n staging`,
	`api-7d9f8c6b5-x2k4q   1/1     Running   0          3h`,
	`2026-11-22T10:00:01Z INFO request_id=5c1e2a3b method=GET path=/v1/items status=200 duration=12ms`,
	`2026-11-22T10:00:02Z WARN auth: token for user 42 expires in 60s`,
	`2026-11-22T10:00:03Z ERROR db: connection refused (host=db.internal port=5432)`,
	`{"tool": "bash", "args": {"command": "npm run build && npm test"}, "security_risk": "LOW"}`,
	`{"tool": "file_edit", "args": {"path": "src/config.ts", "old": "timeout: 30", "new": "timeout: 60"}}`,
	`I'll update the API key handling so that the key is read from the environment instead of the config file.`,
	`The test failed because the mock token provider returns an empty string; let me fix the fixture.`,
	`import { readFileSync } from "node:fs"; const config = JSON.parse(readFileSync("config.json", "utf8"));`,
	`SELECT id, email, created_at FROM users WHERE last_login > now() - interval '30 days' ORDER BY id LIMIT 50;`,
	`docker build -t ghcr.io/acme/api:826e284393f8 --build-arg VERSION=1.24.3 .`,
	`  - name: Checkout`,
	`    uses: actions/checkout@84a9e358729f45e5b9b0113a6e6e85ee77f9c70d # v4.1.1`,
	`    env: { NPM_TOKEN: "${{ secrets.NPM_TOKEN }}" }`,
	`resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#33d3c99695a77676e7409cf456b21351ea700930"`,
	`if (password !== confirmPassword) setError("Passwords do not match");`,
	`// TODO: rotate the signing key every 90 days`,
	`sha256sum dist/vigil_0.3.0_linux_amd64.tar.gz`,
	`3d70ebfd26999cd46231f27a8467f22f826e67b8d9af1e457a43500815e03708  dist/vigil_0.3.0_linux_amd64.tar.gz`,
	`    return {"access": access, "refresh": refresh, "token_type": "Bearer", "expires_in": 3600}`,
}

// typicalSecrets are planted now and then, as real transcripts leak them.
var typicalSecrets = []string{
	`export GITHUB_TOKEN=ghp_LQTluGP6PCqxzZ2o5mBBdHyKeS2pwAk1kuK4`,
	`DATABASE_URL=postgres://app:N5KM6bZNMEyHDSon1@db.internal:5432/app`,
	`curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3MTA0MzQ2NDEiLCJpYXQiOjE2MjEzNzkxODZ9.f-X6nTS44dfBa1v30e5KeHiMPFcSJGyGi4eCyxAx0I6" https://api.example.com/v1/me`,
	`AWS_SECRET_ACCESS_KEY=GWjo07YAsNSnwkoOK3TRB+4fAUxPSu8QjWq0zptt`,
}

var (
	typicalOnce sync.Once
	typicalText string
)

// typical returns about 1 MB of typical event text, the same every run.
func typical() string {
	typicalOnce.Do(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		var b strings.Builder
		for b.Len() < 1<<20 {
			if rng.IntN(200) == 0 {
				b.WriteString(typicalSecrets[rng.IntN(len(typicalSecrets))])
			} else {
				b.WriteString(typicalLines[rng.IntN(len(typicalLines))])
			}
			b.WriteByte('\n')
		}
		typicalText = b.String()
	})
	return typicalText
}

// typicalChunks splits the text into event-sized strings (about 2 KB).
func typicalChunks() []string {
	t := typical()
	var out []string
	for len(t) > 0 {
		n := min(len(t), 2048)
		if i := strings.LastIndexByte(t[:n], '\n'); i > 0 && n < len(t) {
			n = i + 1
		}
		out = append(out, t[:n])
		t = t[n:]
	}
	return out
}

func BenchmarkRedact(b *testing.B) {
	r, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	chunks := typicalChunks()
	total := 0
	for _, c := range chunks {
		total += len(c)
	}
	b.SetBytes(int64(total))
	cpu0 := cpuTime()
	n := 0
	for b.Loop() {
		for _, c := range chunks {
			r.RedactString(c)
		}
		n++
	}
	// The machine may be shared: CPU time spent by the process (all its
	// threads, GC included) gives the per-core rate whatever the load.
	if d := cpuTime() - cpu0; d > 0 {
		b.ReportMetric(float64(total)*float64(n)/1e6/d.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkRedactClean is typical text without any planted secret.
func BenchmarkRedactClean(b *testing.B) {
	r, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Join(typicalLines, "\n")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		r.RedactString(text)
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedactAdversarial redacts 1 MB of each shape of
// adversarialShapes, and the two inputs of issue 10 at their sizes
// (api_key= repeated over 22.5 KB, password= over 180 KB). Besides MB/s it
// reports MB per CPU second (the machine may be shared) and the engine's
// work per byte (the unit of the budget, DefaultWorkPerByte).
func BenchmarkRedactAdversarial(b *testing.B) {
	r, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct{ name, in string }{
		{"issue-api-key-22KB", repeatTo("api_key=", 22500)},
		{"issue-password-180KB", repeatTo("password=", 180000)},
	}
	for _, sh := range adversarialShapes() {
		cases = append(cases, struct{ name, in string }{sh.name, sh.gen(1 << 20)})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			cpu0 := cpuTime()
			for b.Loop() {
				r.RedactString(c.in)
			}
			if d := cpuTime() - cpu0; d > 0 {
				b.ReportMetric(float64(len(c.in))*float64(b.N)/1e6/d.Seconds(), "MB/cpu-s")
			}
			b.ReportMetric(float64(workOf(r, c.in))/float64(len(c.in)), "work/B")
		})
	}
}

// BenchmarkRedactEvent redacts observation events of typical text (about
// 2 KB of content each), as the ingest service does for every event.
func BenchmarkRedactEvent(b *testing.B) {
	r, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	chunks := typicalChunks()
	evs := make([]events.Event, len(chunks))
	total := 0
	for i, c := range chunks {
		evs[i] = events.Event{V: 1, ID: "e", Kind: events.KindObservation, Conversation: "c",
			Data: map[string]any{"action_id": "a", "content": c, "exit_code": int64(0)}}
		total += len(c)
	}
	b.SetBytes(int64(total))
	for b.Loop() {
		for i := range evs {
			r.RedactEvent(&evs[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}
