package httpapi

import (
	"net/http"
)

// pageTable is the approval page's routes: the page and its assets, the
// browser session, and the reads the page makes beyond the /v1 API. They
// are the page's own, not part of the versioned API (schemas/openapi.yaml
// does not list them; docs/http.md does).
var pageTable = []route{
	{Route{Method: http.MethodPost, Path: "/ui/session"}, (*Server).login},
	{Route{Method: http.MethodGet, Path: "/ui/session"}, (*Server).currentSession},
	{Route{Method: http.MethodDelete, Path: "/ui/session", Roles: people}, (*Server).logout},
}

// pageRoutes adds the page's routes to mux and makes the session store.
func (s *Server) pageRoutes(mux *http.ServeMux) {
	s.sessions = newSessionStore()
	for _, rt := range pageTable {
		mux.Handle(rt.Method+" "+rt.Path, s.wrap(rt))
	}
}
