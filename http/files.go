package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// registerFileRoutes serves the Files section of the spec from s.Files
// (503 without it). Every file is a file-<kind>-<name> stream of
// FileWritten/FileDeleted events (content and its SHA-256); state files are
// derived from the order log and read-only. Names are validated (400), an
// unknown file is 404.
//
// Shapes (the Gunbot SDK's): files/strategy/get and files/custom-editor/get
// answer the file's raw content as text/plain (a strategy's JavaScript as
// written, byte for byte; the custom editor's JSON document, "{}" before
// one is written), so a client can write back what it read. The other get
// routes answer the JSON document. files/acvar/get without a body (or
// without filename) answers the default AutoConfig variable file,
// autoconfig-variables.json, or {} while there is none.
func (s *Server) registerFileRoutes(r *mux.Router) {
	r.HandleFunc("/files/acvar", s.handleFileList(domain.FileACVar)).Methods("GET")
	r.HandleFunc("/files/acvar/get", s.handleFileGet(domain.FileACVar)).Methods("POST")
	r.HandleFunc("/files/autoconfig/write", s.handleAutoconfigWrite).Methods("POST")
	r.HandleFunc("/files/backup", s.handleFileList(domain.FileBackup)).Methods("POST")
	r.HandleFunc("/files/backup/get", s.handleFileGet(domain.FileBackup)).Methods("POST")
	r.HandleFunc("/files/custom-editor/get", s.handleCustomEditorGet).Methods("POST")
	r.HandleFunc("/files/custom-editor/write", s.handleCustomEditorWrite).Methods("POST")
	r.HandleFunc("/files/state", s.handleFileList(domain.FileState)).Methods("GET")
	r.HandleFunc("/files/state/get", s.handleFileGet(domain.FileState)).Methods("POST")
	r.HandleFunc("/files/strategy", s.handleFileList(domain.FileStrategy)).Methods("GET")
	r.HandleFunc("/files/strategy/get", s.handleFileGet(domain.FileStrategy)).Methods("POST")
	r.HandleFunc("/files/strategy/write", s.handleStrategyWrite).Methods("POST")
	r.HandleFunc("/files/strategy/delete", s.handleStrategyDelete).Methods("POST")
}

type fileListResponse struct {
	Status string   `json:"status"`
	Result []string `json:"result"`
}

type fileNameRequest struct {
	Filename string `json:"filename"`
}

type fileWriteRequest struct {
	Filename string          `json:"filename"`
	Document json.RawMessage `json:"document"`
}

func (s *Server) filesReady() error {
	if s.Files == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "files are not available")
	}
	return nil
}

func (s *Server) handleFileList(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.filesReady(); err != nil {
			Error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, fileListResponse{Status: "success", Result: s.Files.List(kind)})
	}
}

// defaultACVarFile is what files/acvar/get answers without a filename.
const defaultACVarFile = "autoconfig-variables.json"

func (s *Server) handleFileGet(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req fileNameRequest
		if err := decodeJSON(r, &req, kind == domain.FileACVar); err != nil {
			Error(w, r, err)
			return
		}
		defaulted := kind == domain.FileACVar && req.Filename == ""
		if defaulted {
			req.Filename = defaultACVarFile
		}
		if err := domain.ValidateFileName(kind, req.Filename); err != nil {
			Error(w, r, err)
			return
		}
		if err := s.filesReady(); err != nil {
			Error(w, r, err)
			return
		}
		content, err := s.Files.Get(kind, req.Filename)
		if defaulted && domain.ErrorCode(err) == domain.ENOTFOUND {
			content, err = json.RawMessage("{}"), nil
		}
		if err != nil {
			Error(w, r, err)
			return
		}
		if kind == domain.FileStrategy {
			var text string
			if err := json.Unmarshal(content, &text); err != nil {
				Error(w, r, fmt.Errorf("strategy %s: stored content is not a string: %w", req.Filename, err))
				return
			}
			writeText(w, text)
			return
		}
		writeJSON(w, http.StatusOK, content)
	}
}

// writeText answers a file's raw content as text/plain.
func writeText(w http.ResponseWriter, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, text)
}

// jsonDocument returns a document field as JSON object bytes: an object as
// sent, or a string holding one (clients that send files as text).
func jsonDocument(raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, domain.Errorf(domain.EINVALID, "document is required")
	}
	var text string
	if raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	if _, err := domain.DecodeJSONObject(raw); err != nil {
		return nil, domain.Errorf(domain.EINVALID, "document %s", domain.ErrorMessage(err))
	}
	return raw, nil
}

// fileCommand runs decide on a file's stream through the command path,
// with whether the file exists (by the files read model) as its state
// and the stream's version as the expected version (a deleted file's
// stream has one).
func (s *Server) fileCommand(r *http.Request, kind, name string, decide func(exists bool) ([]domain.Event, error)) error {
	_, err := eventstore.Run(r.Context(), s.commands(), eventstore.Command[bool]{
		Stream: domain.FileStream(kind, name),
		Load: func(context.Context) (bool, domain.ExpectedVersion, error) {
			v := s.Files.Version(kind, name)
			_, err := s.Files.Get(kind, name)
			if domain.ErrorCode(err) == domain.ENOTFOUND {
				return false, v, nil
			}
			return err == nil, v, err
		},
		Decide: decide,
	})
	return err
}

// writeFile sets a file's content (the last writer wins).
func (s *Server) writeFile(r *http.Request, kind, name string, content []byte) error {
	return s.fileCommand(r, kind, name, func(bool) ([]domain.Event, error) {
		return domain.DecideFileWrite(kind, name, content, s.Clock)
	})
}

// handleAutoconfigWrite writes autoconfig.json; when there is a previous
// content it is first kept as backup autoconfig.json.<ms>.
func (s *Server) handleAutoconfigWrite(w http.ResponseWriter, r *http.Request) {
	var req fileWriteRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	doc, err := jsonDocument(req.Document)
	if err != nil {
		Error(w, r, err)
		return
	}
	if err := s.filesReady(); err != nil {
		Error(w, r, err)
		return
	}
	// Validate before any append, so a refusal changes nothing.
	if _, err := domain.NewFileWritten(domain.FileAutoconfig, domain.AutoconfigFileName, doc); err != nil {
		Error(w, r, err)
		return
	}
	if prev, err := s.Files.Get(domain.FileAutoconfig, domain.AutoconfigFileName); err == nil {
		if err := s.writeBackup(r, prev); err != nil {
			Error(w, r, err)
			return
		}
	}
	if err := s.writeFile(r, domain.FileAutoconfig, domain.AutoconfigFileName, doc); err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

// writeBackup stores content as autoconfig.json.<now ms>, moving to the
// next millisecond while that name is taken.
func (s *Server) writeBackup(r *http.Request, content []byte) error {
	ms := s.Clock.Now().UnixMilli()
	for i := 0; i < 100; i++ {
		name := domain.BackupFileName(ms + int64(i))
		err := s.fileCommand(r, domain.FileBackup, name, func(exists bool) ([]domain.Event, error) {
			return domain.DecideFileCreate(exists, domain.FileBackup, name, content, s.Clock)
		})
		if domain.ErrorCode(err) == domain.ECONFLICT {
			continue
		}
		return err
	}
	return domain.Errorf(domain.ECONFLICT, "could not find a free backup name")
}

func (s *Server) handleCustomEditorGet(w http.ResponseWriter, r *http.Request) {
	if err := s.filesReady(); err != nil {
		Error(w, r, err)
		return
	}
	content, err := s.Files.Get(domain.FileCustomEditor, domain.CustomEditorFileName)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		content, err = json.RawMessage("{}"), nil
	}
	if err != nil {
		Error(w, r, err)
		return
	}
	writeText(w, string(content))
}

func (s *Server) handleCustomEditorWrite(w http.ResponseWriter, r *http.Request) {
	var req fileWriteRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	doc, err := jsonDocument(req.Document)
	if err != nil {
		Error(w, r, err)
		return
	}
	if err := s.filesReady(); err != nil {
		Error(w, r, err)
		return
	}
	if err := s.writeFile(r, domain.FileCustomEditor, domain.CustomEditorFileName, doc); err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

func (s *Server) handleStrategyWrite(w http.ResponseWriter, r *http.Request) {
	var req fileWriteRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	if err := domain.ValidateFileName(domain.FileStrategy, req.Filename); err != nil {
		Error(w, r, err)
		return
	}
	var text string
	if len(req.Document) == 0 || json.Unmarshal(req.Document, &text) != nil {
		Error(w, r, domain.Errorf(domain.EINVALID, "document must be a string (the file's text)"))
		return
	}
	if err := s.filesReady(); err != nil {
		Error(w, r, err)
		return
	}
	if err := s.writeFile(r, domain.FileStrategy, req.Filename, []byte(text)); err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

func (s *Server) handleStrategyDelete(w http.ResponseWriter, r *http.Request) {
	var req fileNameRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	if err := domain.ValidateFileName(domain.FileStrategy, req.Filename); err != nil {
		Error(w, r, err)
		return
	}
	if err := s.filesReady(); err != nil {
		Error(w, r, err)
		return
	}
	err := s.fileCommand(r, domain.FileStrategy, req.Filename, func(exists bool) ([]domain.Event, error) {
		return domain.DecideFileDelete(exists, domain.FileStrategy, req.Filename, s.Clock)
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}
