// Live: one EventSource on the event stream for the whole dashboard. The
// browser reconnects by itself and sends Last-Event-ID (the position of the
// last event it saw), so the server resumes right after it; the status line
// says when the connection is lost and when it has resumed. Pages subscribe
// with on(fn) and get every event (the audit stream's JSON).

export class Live {
  constructor(url, onState) {
    this.listeners = new Set();
    this.onState = onState;
    this.lost = false;
    this.lastId = '';
    this.es = new EventSource(url);
    this.es.onopen = () => {
      this.onState(this.lost
        ? { name: 'resumed', text: `live · resumed after ${this.lastId || 'the start'}` }
        : { name: 'live', text: 'live' });
      this.lost = false;
    };
    this.es.onerror = () => {
      this.lost = true;
      this.onState({ name: 'lost', text: 'connection lost · resuming…' });
    };
    this.es.onmessage = (m) => {
      this.lastId = m.lastEventId;
      let ev;
      try { ev = JSON.parse(m.data); } catch { return; }
      for (const fn of this.listeners) fn(ev);
    };
  }

  // on adds a listener and returns the function that removes it.
  on(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close() { this.es.close(); }
}

// debounce calls fn at most once per `ms`, after the last call.
export function debounce(fn, ms = 300) {
  let t = 0;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}
