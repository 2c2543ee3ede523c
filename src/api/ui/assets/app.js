// netgw status page: live updates only. Every page works without this file; with it, runs in
// progress follow the gateway's event stream (/ui/runs/{id}/events: the API's, behind the session).
"use strict";
(function () {
  var MAX_STREAMS = 4; // the gateway caps streams per token (max_streams_per_identity)

  function setNodeStatus(scope, node, cls, label) {
    scope.querySelectorAll('[data-node="' + CSS.escape(node) + '"] [data-node-status], [data-node="' + CSS.escape(node) + '"][data-node-status]').forEach(function (el) {
      el.className = el.className.replace(/\bst-[a-z_-]+/g, "").trim() + " st-" + cls;
      el.setAttribute("data-node-status", cls);
      if (el.tagName === "SPAN") { el.textContent = label; }
    });
  }

  // The words the server uses (pages.rs, result_state).
  function stateOf(ev, whyRun) {
    if (ev.status === "failed") { return ["failed", "failed"]; }
    if (ev.status === "skipped") { return ["skipped", "not driven by netgw"]; }
    if (ev.updated > 0 && whyRun) { return ["drift", "drift: " + ev.updated + " resource(s) would change"]; }
    if (ev.updated > 0) { return ["ok", "converged: " + ev.updated + " resource(s) updated"]; }
    return ["ok", "in sync"];
  }

  function setRunStatus(scope, status) {
    scope.querySelectorAll("#run-status, [data-run-status]").forEach(function (el) {
      el.className = el.className.replace(/\bst-[a-z_-]+/g, "").trim() + " st-" + status;
      el.textContent = status;
    });
  }

  // Progress from the nodes shown (replayed events must not count twice).
  function recount(scope) {
    var states = Array.prototype.map.call(scope.querySelectorAll("[data-node-status]"), function (el) {
      return el.getAttribute("data-node-status");
    });
    var done = states.filter(function (s) { return ["pending", "running", "unknown"].indexOf(s) < 0; }).length;
    scope.querySelectorAll("[data-progress]").forEach(function (p) {
      var bar = p.querySelector("progress"), count = p.querySelector(".count");
      if (!bar) { return; }
      bar.value = Math.min(bar.max, done);
      if (count) { count.textContent = bar.value + "/" + bar.max; }
    });
  }

  function refreshRun(box, id) {
    fetch("/ui/runs/" + encodeURIComponent(id) + "/report", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var frag = doc.getElementById("run-fragment");
        if (!frag) { return; }
        var h1 = box.querySelector("h1");
        while (box.lastChild && box.lastChild !== h1) { box.removeChild(box.lastChild); }
        Array.prototype.slice.call(frag.childNodes).forEach(function (n) { box.appendChild(document.adoptNode(n)); });
        box.setAttribute("data-live", "false");
        document.body.setAttribute("data-run-refreshed", id);
      })
      .catch(function () { /* the page still shows what it had; a reload shows the rest */ });
  }

  function follow(scope, id, onEnd) {
    var es = new EventSource("/ui/runs/" + encodeURIComponent(id) + "/events");
    var seen = 0;
    function on(name, f) {
      es.addEventListener(name, function (m) {
        seen += 1;
        document.body.setAttribute("data-live-events", String(Number(document.body.getAttribute("data-live-events") || 0) + 1));
        try { f(JSON.parse(m.data)); } catch (e) { /* ignore a malformed event */ }
      });
    }
    on("run_queued", function () { });
    on("node_started", function (ev) { setNodeStatus(scope, ev.node, "running", "running"); setRunStatus(scope, "running"); });
    var whyRun = scope.getAttribute("data-why-run") === "true";
    on("node_finished", function (ev) { var s = stateOf(ev, whyRun); setNodeStatus(scope, ev.node, s[0], s[1]); recount(scope); });
    on("node_cancelled", function (ev) { setNodeStatus(scope, ev.node, "failed", "cancelled"); recount(scope); });
    function end(ev) { es.close(); setRunStatus(scope, ev.status || "finished"); if (onEnd) { onEnd(); } }
    on("run_finished", end);
    on("run_interrupted", function () { end({ status: "interrupted" }); });
    es.onerror = function () { if (es.readyState === EventSource.CLOSED) { return; } if (seen > 0 && es.readyState !== EventSource.OPEN) { es.close(); } };
  }

  // Runs followed at once on the runs list (each its own stream; the list's feed is one more).
  var following = 0;
  function followRow(tr) {
    if (following >= MAX_STREAMS) { return; }
    following += 1;
    follow(tr, tr.getAttribute("data-run-id"), function () { following -= 1; });
  }

  // A row as the server renders it (/ui/runs/{id}/row): inserted first, or in place of the shown one.
  function showRow(table, id, isNew) {
    fetch("/ui/runs/" + encodeURIComponent(id) + "/row", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var row = doc.querySelector("#row-fragment tr[data-run-id]");
        if (!row) { return; }
        row = document.adoptNode(row);
        var body = table.tBodies[0];
        var old = body.querySelector('tr[data-run-id="' + CSS.escape(id) + '"]');
        if (old) {
          body.replaceChild(row, old);
        } else {
          body.insertBefore(row, body.firstChild);
          var max = Number(table.getAttribute("data-max-rows") || 20);
          while (body.rows.length > max) { body.removeChild(body.lastChild); }
        }
        var empty = document.getElementById("no-runs");
        if (empty) { empty.parentNode.removeChild(empty); }
        var box = table.closest("[hidden]");
        if (box) { box.removeAttribute("hidden"); }
        if (isNew && row.getAttribute("data-live") === "true") { followRow(row); }
        document.body.setAttribute("data-rows-shown", String(Number(document.body.getAttribute("data-rows-shown") || 0) + 1));
      })
      .catch(function () { /* a reload shows it */ });
  }

  // The runs list: runs started elsewhere (the API, another operator) appear without a reload.
  function liveList(table) {
    var es = new EventSource("/ui/runs/events");
    es.addEventListener("run_created", function (m) {
      try { showRow(table, JSON.parse(m.data).run_id, true); } catch (e) { /* ignore a malformed event */ }
    });
    es.addEventListener("run_finished", function (m) {
      try { showRow(table, JSON.parse(m.data).run_id, false); } catch (e) { /* ignore a malformed event */ }
    });
    // Announcements were missed: the page as the server has it now.
    es.addEventListener("resync", function () { es.close(); location.reload(); });
    es.onopen = function () { document.body.setAttribute("data-live-list", "open"); };
  }

  document.addEventListener("DOMContentLoaded", function () {
    var run = document.getElementById("run");
    if (run && run.getAttribute("data-live") === "true") {
      var id = run.getAttribute("data-run-id");
      follow(run, id, function () { refreshRun(run, id); });
    }
    Array.prototype.forEach.call(document.querySelectorAll("tr[data-run-id][data-live]"), followRow);
    var list = document.querySelector("table[data-live-list]");
    if (list) { liveList(list); }
  });
})();
