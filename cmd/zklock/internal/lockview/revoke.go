package lockview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"time"

	"github.com/zklock/zklock"
)

// holderOf finds the holder whose node is at the caller's path p.
func (s *Server) holderOf(p string) (Lock, Node, bool) {
	l, _, ok := s.v.Lock(lockOf(p))
	if !ok {
		l, _, ok = s.v.Lock(path.Dir(p))
	}
	for _, n := range l.Holders {
		if ok && n.Path == p {
			return l, n, true
		}
	}
	return l, Node{}, false
}

func (s *Server) confirmRevoke(w http.ResponseWriter, r *http.Request) {
	if !s.allowRevoke {
		s.fail(w, http.StatusForbidden, "Revocation is off", "This server is read-only: start zklock ui with --allow-revoke to ask holders to release.")
		return
	}
	p := r.URL.Query().Get("node")
	l, n, ok := s.holderOf(p)
	if !ok {
		s.fail(w, http.StatusNotFound, "Not a holder", p+" is not the node of a holder shown here (it may have released already).")
		return
	}
	pg := s.base("Ask to release")
	pg.Lock, pg.Node, pg.Token = l, n, s.token
	s.render(w, http.StatusOK, "revoke", pg)
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if !s.allowRevoke {
		s.fail(w, http.StatusForbidden, "Revocation is off", "This server is read-only: start zklock ui with --allow-revoke to ask holders to release.")
		return
	}
	site := r.Header.Get("Sec-Fetch-Site")
	if r.FormValue("token") != s.token || (site != "" && site != "same-origin" && site != "none") {
		s.fail(w, http.StatusForbidden, "Request refused", "The confirmation form was not this server's: open the lock's page and ask again.")
		return
	}
	p := r.FormValue("node")
	l, _, ok := s.holderOf(p)
	if !ok {
		s.fail(w, http.StatusNotFound, "Not a holder", p+" is not the node of a holder shown here (it may have released already).")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	if err := s.v.Revoke(ctx, p); err != nil {
		code := http.StatusBadGateway
		if errors.Is(err, zklock.ErrInvalidArgument) {
			code = http.StatusBadRequest
		}
		s.fail(w, code, "Revocation failed", err.Error())
		return
	}
	http.Redirect(w, r, lockURL(l.Path)+"?revoked=1", http.StatusSeeOther)
}

// Revoke asks the holder of the node at the caller's path p to release
// (zklock.Revoke: Curator's revocation request, which only a revocable
// holder acts on). Only a node the view shows as holding is accepted.
func (v *View) Revoke(ctx context.Context, p string) error {
	v.mu.Lock()
	ls, ok := v.locks[path.Dir(p)]
	if !ok && path.Base(path.Dir(p)) == "leases" {
		ls, ok = v.locks[path.Dir(path.Dir(p))]
	}
	var holder *Node
	if ok {
		for i := range ls.lock.Holders {
			if ls.lock.Holders[i].Path == p {
				holder = &ls.lock.Holders[i]
			}
		}
	}
	v.mu.Unlock()
	if holder == nil {
		return fmt.Errorf("%w: %s is not a holder's node shown here", zklock.ErrInvalidArgument, p)
	}
	if err := zklock.Revoke(ctx, v.s, p); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.revokes[v.s.FullPath(p)] = time.Now()
	if ls, ok := v.locks[ls.lock.Path]; ok {
		v.addLocked(ls, &Event{At: time.Now(), Kind: EventRevoke, Node: holder.Name, Session: holder.Session, ID: holder.ID,
			Token: holder.Token, Why: "this server wrote Curator's revocation request (__REVOKE__) to the node"})
	}
	v.notifyLocked()
	return nil
}
