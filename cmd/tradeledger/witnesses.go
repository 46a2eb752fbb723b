package main

import (
	"context"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witnesses"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections/metrics"
)

// witnessFlag is serve's repeatable --witness 'VKEY URL'; its environment
// twin TRADELEDGER_WITNESS holds one witness per line.
type witnessFlag []witnesses.Witness

func (f *witnessFlag) String() string {
	var s []string
	for _, w := range *f {
		s = append(s, w.Key()+" "+w.URL)
	}
	return strings.Join(s, "\n")
}

// Set adds each non-empty line of v as a witness.
func (f *witnessFlag) Set(v string) error {
	for _, line := range strings.Split(v, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		w, err := witnesses.ParseWitness(line)
		if err != nil {
			return err
		}
		*f = append(*f, w)
	}
	return nil
}

// witnessTick is how often each witness that has not cosigned the latest
// checkpoint is looked at (a new checkpoint wakes them at once).
const witnessTick = time.Second

// newWitnesses makes the witness client when --witness is given: each new
// checkpoint of the transparency log goes to every witness, and their
// answers are recorded in the checkpoints stream.
func (m *Main) newWitnesses() {
	if len(m.Config.Witnesses) == 0 {
		return
	}
	c := witnesses.New(m.Tlog, m.Config.Witnesses, eventstore.NewCommands(m.DataDir.Store, m.Runner), m.Clock)
	c.Quorum = m.Config.WitnessQuorum
	log := m.Logger.Named("witness")
	c.OnError = func(w witnesses.Witness, err error) {
		if strings.HasPrefix(err.Error(), "REFUSED") {
			log.Error("a witness refused a checkpoint as inconsistent: the log forked, was rewritten or cut", zap.String("witness", w.Name()), zap.String("url", w.URL), zap.Error(err))
			return
		}
		log.Warn("witness", zap.String("witness", w.Name()), zap.String("url", w.URL), zap.Error(err))
	}
	m.Tlog.OnCheckpoint = c.Wake
	m.Witnesses = c
}

// startWitnesses sends the checkpoints to the witnesses in the
// background until Close (ManualCheckpoints: the test calls Tick).
func (m *Main) startWitnesses() {
	if m.Witnesses == nil || m.ManualCheckpoints {
		return
	}
	m.tlogWork.start(func(ctx context.Context) {
		m.Witnesses.Run(eventstore.WithActor(ctx, domain.ActorCore), witnessTick)
	})
}

// wireWitnesses hands the witnesses' state to the HTTP server and the
// metrics.
func (m *Main) wireWitnesses(s *tlhttp.Server) {
	if m.Witnesses == nil {
		return
	}
	s.Witnesses = func() tlhttp.WitnessReport { return witnessReport(m.Witnesses.Status()) }
	m.Metrics.WatchWitnesses(func() metrics.WitnessState {
		st := m.Witnesses.Status()
		out := metrics.WitnessState{Missing: st.Missing}
		for _, w := range st.Witnesses {
			out.Witnesses = append(out.Witnesses, metrics.WitnessGauge{Name: w.Name, Size: w.Size, Refused: w.Refused != nil})
		}
		return out
	})
}

// witnessReport is st as the HTTP server shows it.
func witnessReport(st witnesses.Status) tlhttp.WitnessReport {
	rep := tlhttp.WitnessReport{Size: st.Size, Quorum: st.Quorum, Cosigned: st.Cosigned, Missing: st.Missing}
	for _, w := range st.Witnesses {
		info := tlhttp.WitnessInfo{Name: w.Name, Key: w.Key, URL: w.URL, Size: w.Size, Current: w.Current, Error: w.Error}
		if !w.Time.IsZero() {
			info.Time = w.Time.UnixMilli()
		}
		if !w.NextAttempt.IsZero() && w.Error != "" {
			info.NextAttempt = w.NextAttempt.UnixMilli()
		}
		if r := w.Refused; r != nil {
			info.Refused = &tlhttp.WitnessRefusal{Size: r.Size, Root: r.Root, WitnessSize: r.WitnessSize, Status: r.Status, Reason: r.Reason}
		}
		rep.Witnesses = append(rep.Witnesses, info)
	}
	return rep
}
