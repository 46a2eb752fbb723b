package gunbot

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
)

// Importer turns what Read found into the appends that record it. Every
// event id is derived from the source (file name and content hash, or the
// order's fields), so that importing the same folder again appends nothing:
// stores answer a re-append of stored ids as a retry.
type Importer struct {
	// Box encrypts exchange secrets found in clear (isEncrypted false).
	Box *domain.SecretBox
	// Clock stamps the configuration's and the files' events; orders carry
	// their trade time.
	Clock domain.Clock
	// Wallet is the data dir's bot.service_wallet (the login encryption
	// key its clients use), "" when it has none.
	Wallet string
	// TakeWallet replaces Wallet by the folder's; by default the data
	// dir's is kept.
	TakeWallet bool
}

// Unit is one append of an import: one stream's events, appended at once.
type Unit struct {
	What string // for progress and messages: "config.js", "strategy dca.js", "order binance USDT-BTC 9001"
	Kind string // KindConfig, KindFile or KindOrder
	// Order is the order a KindOrder unit records (Importer.Order).
	Order Order
	domain.StreamAppend
}

// Kinds of units.
const (
	KindConfig = "config"
	KindFile   = "file"
	KindOrder  = "order"
	KindSystem = "system" // the bot core started or stopped (import --start; an import that changes a started core's configuration)
)

// ConfigNotes says what became of the configuration's secrets and wallet.
type ConfigNotes struct {
	SecretsDropped int    // Gunbot-encrypted exchange secrets, which cannot be read
	Wallet         string // what became of bot.service_wallet, for the summary
}

// ID returns a UUID-shaped id (version 8, RFC 9562 variant) derived from
// parts: the same source always gives the same id. The configuration's and
// the files' events have such ids.
func ID(parts ...string) string {
	sum := idHash(parts)
	var u [16]byte
	copy(u[:], sum[:])
	return domain.FormatUUID(u, 8)
}

// TimeID is ID with the first 48 bits replaced by ms, as in a UUIDv7: the
// ids of events appended in time order then increase, and the store's id
// index grows at its end instead of at random places (a random insert
// rewrites an index page per event: at 200,000 orders that was most of an
// import's time). The remaining 74 bits come from the hash of parts. The
// orders' events have such ids.
func TimeID(ms int64, parts ...string) string {
	sum := idHash(parts)
	var u [16]byte
	binary.BigEndian.PutUint16(u[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	copy(u[6:], sum[:10])
	return domain.FormatUUID(u, 8)
}

// idHash is the SHA-256 of "tradeledger-import" followed by each part
// after a zero byte.
func idHash(parts []string) [32]byte {
	var buf [160]byte // the parts of an order's ids fit: no allocation
	b := append(buf[:0], "tradeledger-import"...)
	for _, p := range parts {
		b = append(append(b, 0), p...)
	}
	return sha256.Sum256(b)
}

// event returns an import event with id, its time ms (the clock's when 0),
// its actor ActorImport.
func (im *Importer) event(typ string, data any, ms int64, id string) domain.Event {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("marshal %s payload: %v", typ, err)) // the payload types of domain always marshal
	}
	return im.eventJSON(typ, b, ms, id)
}

// eventJSON is event with the payload data encoded already.
func (im *Importer) eventJSON(typ string, data []byte, ms int64, id string) domain.Event {
	if ms <= 0 {
		ms = im.Clock.Now().UnixMilli()
	}
	return domain.Event{ID: id, Type: typ, Schema: 1, Time: ms, Actor: domain.ActorImport, Data: data}
}

// Config turns the folder's configuration into ConfigReplaced (secrets
// removed; missing sections empty; the data dir's wallet kept unless
// TakeWallet) and ExchangeKeysSet for secrets in clear, in one append on
// the config stream. A configuration the domain refuses is an error naming
// the file.
func (im *Importer) Config(c *ConfigFile) (Unit, ConfigNotes, error) {
	var notes ConfigNotes
	doc, err := domain.DecodeJSONObject(c.JSON)
	if err != nil {
		return Unit{}, notes, fmt.Errorf("%s: %s", c.Name, domain.ErrorMessage(err))
	}
	for _, s := range []string{"bot", "exchanges", "pairs", "strategies", "GUI"} {
		if _, ok := doc[s]; !ok {
			doc[s] = map[string]any{}
		}
	}
	if bot, ok := doc["bot"].(map[string]any); ok {
		// The data dir's wallet is the login encryption key its clients
		// use: replacing it silently would lock them out.
		w, _ := bot["service_wallet"].(string)
		switch {
		case w == "" || w == domain.Mask: // absent or masked (a restore without --with-secrets)
			bot["service_wallet"] = im.Wallet
			notes.Wallet = "kept the data dir's service wallet (the folder has none)"
		case w == im.Wallet || im.Wallet == "":
			notes.Wallet = "service wallet unchanged (the folder's is the data dir's)"
		case im.TakeWallet:
			notes.Wallet = "took the folder's service wallet (--take-wallet): clients must encrypt the login password with it"
		default:
			bot["service_wallet"] = im.Wallet
			notes.Wallet = "kept the data dir's service wallet; the folder's differs (--take-wallet to use it)"
		}
	}
	sha := domain.FileSHA256(c.Body)
	var keys []domain.Event
	if exchanges, ok := doc["exchanges"].(map[string]any); ok {
		names := make([]string, 0, len(exchanges))
		for n := range exchanges {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, ex := range names {
			entry, ok := exchanges[ex].(map[string]any)
			if !ok {
				continue
			}
			encrypted, _ := entry["isEncrypted"].(bool)
			fields := map[string]string{}
			stripped, secrets := domain.ExtractSecrets(entry) // by domain.IsSecretPath, at any depth
			for f, s := range secrets {
				if s == "" {
					continue
				}
				if encrypted {
					notes.SecretsDropped++
					continue
				}
				fields[f] = im.Box.Seal(s)
			}
			stripped["isEncrypted"] = len(fields) > 0
			exchanges[ex] = stripped
			if len(fields) > 0 {
				keys = append(keys, im.event(domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: ex, Fields: fields}, 0, ID(domain.TypeExchangeKeysSet, sha, ex)))
			}
		}
	}
	cfg, err := domain.ConfigFromMap(doc)
	if err != nil {
		return Unit{}, notes, fmt.Errorf("%s: %s", c.Name, domain.ErrorMessage(err))
	}
	b, err := json.Marshal(cfg.WithoutSecrets())
	if err != nil {
		return Unit{}, notes, err
	}
	// The id also covers the wallet the configuration ends up with, so that
	// --take-wallet after a plain import of the same folder is a change,
	// and importing again with the same outcome adds nothing.
	idParts := []string{sha}
	if bot, ok := doc["bot"].(map[string]any); ok {
		w, _ := bot["service_wallet"].(string)
		idParts = append(idParts, "wallet", w)
	}
	events := append([]domain.Event{im.event(domain.TypeConfigReplaced, domain.ConfigReplaced{Config: b}, 0, ID(append([]string{domain.TypeConfigReplaced}, idParts...)...))}, keys...)
	return Unit{What: c.Name, Kind: KindConfig, StreamAppend: domain.StreamAppend{
		Stream: domain.StreamConfig, Expected: domain.Any, Events: events,
	}}, notes, nil
}

// StartsSystem reports whether the folder's configuration says the bot
// core runs: GUI.start true, as Gunbot starts trading on launch then. An
// import does not follow it (it never starts trading on its own); it says
// so.
func StartsSystem(c *ConfigFile) bool {
	doc, err := domain.DecodeJSONObject(c.JSON)
	if err != nil {
		return false
	}
	gui, _ := doc["GUI"].(map[string]any)
	start, _ := gui["start"].(bool)
	return start
}

// File turns a stored file into its FileWritten on the file's stream.
func (im *Importer) File(f File) Unit {
	fw := f.Written
	return Unit{What: fw.Kind + " " + fw.Name, Kind: KindFile, StreamAppend: domain.StreamAppend{
		Stream: domain.FileStream(fw.Kind, fw.Name), Expected: domain.Any,
		Events: []domain.Event{im.event(domain.TypeFileWritten, fw, 0, ID(domain.TypeFileWritten, fw.Kind, fw.Name, fw.SHA256))},
	}}
}

// Order turns an order into a new order stream: OrderRequested,
// OrderAccepted and one OrderFilled for the whole amount at the order's
// rate, all at the order's trade time, with TimeIDs. The stream is expected
// new (domain.NoStream): a re-import is answered as a retry. The stream is
// order-<o.ID>; when another order holds it, the append fails with
// ECONFLICT and the import moves o to the next id. Versions before TimeIDs
// gave these events IDs: a stream of theirs (at the LegacyID) makes the
// append fail with ECONFLICT too, and IsImportedOrder tells such a stream
// apart.
func (im *Importer) Order(o Order) Unit { return im.OrderInto(o, make([]domain.Event, OrderEvents)) }

// OrderEvents is how many events Order makes of an order.
const OrderEvents = 3

// OrderInto is Order with the events written into events (OrderEvents of
// them, whatever it held before): an import building its orders a chunk at
// a time reuses the chunk's events once they are appended.
func (im *Importer) OrderInto(o Order, events []domain.Event) Unit {
	quote, _, _ := domain.SplitPair(o.Pair) // checked by Read
	idKey := strconv.FormatInt(o.ID, 10)
	// The events' ids derive from LegacyID, not ID: an order moved to the
	// next id (OrderID) keeps them, and two orders that share an id never
	// share an event id, so the second is a conflict, not a re-append of
	// the first. Versions that gave orders their LegacyID gave the same.
	// An order not from Read (LegacyID 0) keys them by ID.
	eventKey := idKey
	if o.LegacyID != 0 {
		eventKey = strconv.FormatInt(o.LegacyID, 10)
	}
	// The payloads are encoded by hand (payload.go): the same bytes as
	// json.Marshal's.
	requested := domain.OrderRequested{
		OrderID: o.ID, Exchange: o.Exchange, Pair: o.Pair, Side: o.Side, Kind: domain.KindLimit,
		Amount: o.Amount, Price: o.Rate, ClientOrderID: "import-" + idKey,
	}
	accepted := domain.OrderAccepted{ExchangeOrderID: o.SourceID}
	filled := domain.OrderFilled{FillID: "import-" + idKey, Price: o.Rate, Quantity: o.Amount, FeeAsset: quote}
	events = events[:OrderEvents:OrderEvents]
	events[0] = im.eventJSON(domain.TypeOrderRequested, orderRequestedJSON(&requested), o.Time, TimeID(o.Time, domain.TypeOrderRequested, eventKey, "requested"))
	events[1] = im.eventJSON(domain.TypeOrderAccepted, orderAcceptedJSON(&accepted), o.Time, TimeID(o.Time, domain.TypeOrderAccepted, eventKey, "accepted"))
	events[2] = im.eventJSON(domain.TypeOrderFilled, orderFilledJSON(&filled), o.Time, TimeID(o.Time, domain.TypeOrderFilled, eventKey, "filled"))
	return Unit{What: "order " + o.Exchange + " " + o.Pair + " " + o.SourceID, Kind: KindOrder, Order: o, StreamAppend: domain.StreamAppend{
		Stream: domain.OrderStream(o.ID), Expected: domain.NoStream, Events: events,
	}}
}

// IsImportedOrder reports whether first, the first event of u's stream as
// stored, records the same order as u: an OrderRequested by an import with
// u's order id. Since the order id (and so the stream) is derived from every
// field of the order, that stream holds this order, appended by an earlier
// import (one that gave order events other ids).
func IsImportedOrder(u *Unit, first *domain.Event) bool {
	if u.Kind != KindOrder || first.Type != domain.TypeOrderRequested || first.Actor != domain.ActorImport || len(u.Events) == 0 {
		return false
	}
	var got, want domain.OrderRequested
	if first.Decode(&got) != nil || u.Events[0].Decode(&want) != nil {
		return false
	}
	return got.OrderID == want.OrderID && got.Exchange == want.Exchange && got.Pair == want.Pair &&
		got.Side == want.Side && got.Amount.Cmp(want.Amount) == 0 && got.Price.Cmp(want.Price) == 0
}

// Summary counts what an import did; String is the import command's last
// line.
type Summary struct {
	From                    string
	Added, Present, Skipped int // units (config, files, orders)
	Config, Files, Orders   int // units seen, by kind
	SecretsDropped          int // Gunbot-encrypted exchange secrets we cannot read
	EventsAppended          uint64
	Wallet                  string // what became of bot.service_wallet
	System                  string // what became of the bot core's state (import --start, GUI.start)
}

// Count adds a unit's outcome: appended now (added) or found stored.
func (s *Summary) Count(u *Unit, added bool) {
	if added {
		s.Added++
		s.EventsAppended += uint64(len(u.Events))
	} else {
		s.Present++
	}
	switch u.Kind {
	case KindConfig:
		s.Config++
	case KindFile:
		s.Files++
	case KindOrder:
		s.Orders++
	}
}

// String is the summary line.
func (s Summary) String() string {
	line := fmt.Sprintf("imported %s: %d new, %d already present, %d skipped (config %d, files %d, orders %d; %d events appended)",
		s.From, s.Added, s.Present, s.Skipped, s.Config, s.Files, s.Orders, s.EventsAppended)
	if s.SecretsDropped > 0 {
		line += fmt.Sprintf("; %d encrypted exchange secrets not imported (set them again with license/keys/edit or config/update)", s.SecretsDropped)
	}
	if s.Wallet != "" {
		line += "; " + s.Wallet
	}
	if s.System != "" {
		line += "; " + s.System
	}
	return line
}
