// zklock ui: keeps #live current from the server's events (server-sent
// events, sent when a ZooKeeper watch fires), and ticks the ages.
(function () {
  "use strict";
  var live = document.getElementById("live");
  function fmt(ms) {
    var s = Math.max(0, Math.floor(ms / 1000)), out = "";
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    if (h) out += h + "h";
    if (h || m) out += m + "m";
    return out + (s % 60) + "s";
  }
  function tick() {
    var now = Date.now(), els = document.querySelectorAll("time[data-since]");
    for (var i = 0; i < els.length; i++) {
      els[i].textContent = fmt(now - Number(els[i].getAttribute("data-since")));
    }
  }
  setInterval(tick, 1000);
  if (!live || !window.EventSource) return;
  var src = live.getAttribute("data-events"), es, retry;
  function paused(on) {
    var p = live.querySelector(".paused");
    if (p) p.hidden = !on;
  }
  function connect(url) {
    if (es) es.close();
    clearTimeout(retry);
    es = new EventSource(url);
    es.addEventListener("update", function (e) {
      live.innerHTML = e.data;
      live.setAttribute("data-updated", String(Date.now()));
      tick();
    });
    es.onerror = function () {
      paused(true);
      // An answer that is not a stream (503: the server streams to as
      // many pages as it allows) closes the EventSource for good: try
      // again a while later, as Retry-After asks.
      if (es.readyState === EventSource.CLOSED) {
        retry = setTimeout(function () { connect(url); }, 4000 + Math.random() * 2000);
      }
    };
    es.onopen = function () { paused(false); };
  }
  connect(src);
  // The filter and sort apply without a reload: the stream is opened again
  // with them, and sends the matching table at once.
  var form = document.querySelector("form.filter");
  if (form) {
    var apply = function (ev) {
      if (ev) ev.preventDefault();
      var q = new URLSearchParams(new FormData(form)).toString();
      history.replaceState(null, "", "/?" + q);
      connect("/events?view=overview&" + q);
    };
    form.addEventListener("submit", apply);
    form.addEventListener("change", apply);
    var input = form.querySelector("input[name=q]");
    var timer;
    if (input) input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 250); });
  }
})();
