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

// FileStore is the read model of stored files and state files
// (projections.Files), which the file routes read and decide against.
type FileStore interface {
	// List returns the names of kind's files, sorted.
	List(kind string) []string
	// Get returns a file's content (ENOTFOUND for an unknown file).
	Get(kind, name string) (json.RawMessage, error)
	// Version returns the version of the file's stream (domain.NoStream
	// before its first event).
	Version(kind, name string) domain.ExpectedVersion
}

// filesHandler serves the Files section of the spec from a FileStore (503
// without it), sending writes through the command path. Every file is a
// file-<kind>-<name> stream of
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
type filesHandler struct {
	files FileStore
	cmds  *eventstore.Commands
	clock domain.Clock
}

func (h *filesHandler) register(r *mux.Router) {
	r.Handle("/files/acvar", h.handleFileList(domain.FileACVar)).Methods("GET")
	r.Handle("/files/acvar/get", h.handleFileGet(domain.FileACVar)).Methods("POST")
	r.Handle("/files/autoconfig/write", handlerFunc(h.handleAutoconfigWrite)).Methods("POST")
	r.Handle("/files/backup", h.handleFileList(domain.FileBackup)).Methods("POST")
	r.Handle("/files/backup/get", h.handleFileGet(domain.FileBackup)).Methods("POST")
	r.Handle("/files/custom-editor/get", handlerFunc(h.handleCustomEditorGet)).Methods("POST")
	r.Handle("/files/custom-editor/write", handlerFunc(h.handleCustomEditorWrite)).Methods("POST")
	r.Handle("/files/state", h.handleFileList(domain.FileState)).Methods("GET")
	r.Handle("/files/state/get", h.handleFileGet(domain.FileState)).Methods("POST")
	r.Handle("/files/strategy", h.handleFileList(domain.FileStrategy)).Methods("GET")
	r.Handle("/files/strategy/get", h.handleFileGet(domain.FileStrategy)).Methods("POST")
	r.Handle("/files/strategy/write", handlerFunc(h.handleStrategyWrite)).Methods("POST")
	r.Handle("/files/strategy/delete", handlerFunc(h.handleStrategyDelete)).Methods("POST")
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

func (h *filesHandler) ready() error {
	if h.files == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "files are not available")
	}
	return nil
}

func (h *filesHandler) handleFileList(kind string) handlerFunc {
	return requires(h.ready, func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, fileListResponse{Status: "success", Result: h.files.List(kind)})
		return nil
	})
}

// defaultACVarFile is what files/acvar/get answers without a filename.
const defaultACVarFile = "autoconfig-variables.json"

func (h *filesHandler) handleFileGet(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req fileNameRequest
		if err := decodeJSON(r, &req, kind == domain.FileACVar); err != nil {
			return err
		}
		defaulted := kind == domain.FileACVar && req.Filename == ""
		if defaulted {
			req.Filename = defaultACVarFile
		}
		if err := domain.ValidateFileName(kind, req.Filename); err != nil {
			return err
		}
		if err := h.ready(); err != nil {
			return err
		}
		content, err := h.files.Get(kind, req.Filename)
		if defaulted && domain.ErrorCode(err) == domain.ENOTFOUND {
			content, err = json.RawMessage("{}"), nil
		}
		if err != nil {
			return err
		}
		if kind == domain.FileStrategy {
			var text string
			if err := json.Unmarshal(content, &text); err != nil {
				return fmt.Errorf("strategy %s: stored content is not a string: %w", req.Filename, err)
			}
			writeText(w, text)
			return nil
		}
		writeJSON(w, http.StatusOK, content)
		return nil
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
func (h *filesHandler) fileCommand(r *http.Request, kind, name string, decide func(exists bool) ([]domain.Event, error)) error {
	_, err := eventstore.Run(r.Context(), h.cmds, eventstore.Command[bool]{
		Stream: domain.FileStream(kind, name),
		Load: func(context.Context) (bool, domain.ExpectedVersion, error) {
			v := h.files.Version(kind, name)
			_, err := h.files.Get(kind, name)
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
func (h *filesHandler) writeFile(r *http.Request, kind, name string, content []byte) error {
	return h.fileCommand(r, kind, name, func(bool) ([]domain.Event, error) {
		return domain.DecideFileWrite(kind, name, content, h.clock)
	})
}

// handleAutoconfigWrite writes autoconfig.json; when there is a previous
// content it is first kept as backup autoconfig.json.<ms>.
func (h *filesHandler) handleAutoconfigWrite(w http.ResponseWriter, r *http.Request) error {
	doc, err := h.decodeDocumentWrite(r)
	if err != nil {
		return err
	}
	// Validate before any append, so a refusal changes nothing.
	if _, err := domain.NewFileWritten(domain.FileAutoconfig, domain.AutoconfigFileName, doc); err != nil {
		return err
	}
	if prev, err := h.files.Get(domain.FileAutoconfig, domain.AutoconfigFileName); err == nil {
		if err := h.writeBackup(r, prev); err != nil {
			return err
		}
	}
	return answerConfigOK(w, h.writeFile(r, domain.FileAutoconfig, domain.AutoconfigFileName, doc))
}

// decodeDocumentWrite reads the body of a write whose document is JSON
// (jsonDocument) and returns the document, once the files are ready.
func (h *filesHandler) decodeDocumentWrite(r *http.Request) ([]byte, error) {
	var req fileWriteRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return nil, err
	}
	doc, err := jsonDocument(req.Document)
	if err != nil {
		return nil, err
	}
	if err := h.ready(); err != nil {
		return nil, err
	}
	return doc, nil
}

// writeBackup stores content as autoconfig.json.<now ms>, moving to the
// next millisecond while that name is taken.
func (h *filesHandler) writeBackup(r *http.Request, content []byte) error {
	ms := h.clock.Now().UnixMilli()
	for i := 0; i < 100; i++ {
		name := domain.BackupFileName(ms + int64(i))
		err := h.fileCommand(r, domain.FileBackup, name, func(exists bool) ([]domain.Event, error) {
			return domain.DecideFileCreate(exists, domain.FileBackup, name, content, h.clock)
		})
		if domain.ErrorCode(err) == domain.ECONFLICT {
			continue
		}
		return err
	}
	return domain.Errorf(domain.ECONFLICT, "could not find a free backup name")
}

func (h *filesHandler) handleCustomEditorGet(w http.ResponseWriter, r *http.Request) error {
	if err := h.ready(); err != nil {
		return err
	}
	content, err := h.files.Get(domain.FileCustomEditor, domain.CustomEditorFileName)
	if domain.ErrorCode(err) == domain.ENOTFOUND {
		content, err = json.RawMessage("{}"), nil
	}
	if err != nil {
		return err
	}
	writeText(w, string(content))
	return nil
}

func (h *filesHandler) handleCustomEditorWrite(w http.ResponseWriter, r *http.Request) error {
	doc, err := h.decodeDocumentWrite(r)
	if err != nil {
		return err
	}
	return answerConfigOK(w, h.writeFile(r, domain.FileCustomEditor, domain.CustomEditorFileName, doc))
}

func (h *filesHandler) handleStrategyWrite(w http.ResponseWriter, r *http.Request) error {
	var req fileWriteRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if err := domain.ValidateFileName(domain.FileStrategy, req.Filename); err != nil {
		return err
	}
	var text string
	if len(req.Document) == 0 || json.Unmarshal(req.Document, &text) != nil {
		return domain.Errorf(domain.EINVALID, "document must be a string (the file's text)")
	}
	if err := h.ready(); err != nil {
		return err
	}
	return answerConfigOK(w, h.writeFile(r, domain.FileStrategy, req.Filename, []byte(text)))
}

func (h *filesHandler) handleStrategyDelete(w http.ResponseWriter, r *http.Request) error {
	var req fileNameRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if err := domain.ValidateFileName(domain.FileStrategy, req.Filename); err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	return answerConfigOK(w, h.fileCommand(r, domain.FileStrategy, req.Filename, func(exists bool) ([]domain.Event, error) {
		return domain.DecideFileDelete(exists, domain.FileStrategy, req.Filename, h.clock)
	}))
}
