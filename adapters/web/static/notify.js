// The status page's "Notify me" button. Without JavaScript, or where this browser cannot
// subscribe (no service worker, no PushManager: an iPhone's Safari until the page is
// added to the home screen), the button stays hidden and the page is the same.
(function () {
  "use strict";
  var box = document.getElementById("notify");
  if (!box || !("serviceWorker" in navigator) || !("PushManager" in window) ||
      !("Notification" in window)) {
    return;
  }
  var button = document.getElementById("notify-button");
  var choice = document.getElementById("notify-receive");
  var status = document.getElementById("notify-status");
  var d = box.dataset;

  function key(text) {
    var padded = (text + "===".slice((text.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(padded);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }
  function say(text) { status.textContent = text; }
  function post(path, body) {
    return fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(body),
    }).then(function (r) { return r.json(); });
  }
  function show(on) {
    box.dataset.on = on ? "1" : "";
    button.textContent = on ? d.labelOff : d.labelOn;
  }

  var ready = navigator.serviceWorker.register("/sw.js", { scope: "/" })
    .then(function () { return navigator.serviceWorker.ready; });
  ready.then(function (reg) { return reg.pushManager.getSubscription(); })
    .then(function (sub) { show(!!sub); box.hidden = false; })
    .catch(function () { box.hidden = true; });

  button.addEventListener("click", function () {
    button.disabled = true;
    var done = function () { button.disabled = false; };
    if (box.dataset.on) {
      ready.then(function (reg) { return reg.pushManager.getSubscription(); })
        .then(function (sub) {
          if (!sub) return { message: d.off };
          var endpoint = sub.endpoint;
          return sub.unsubscribe().then(function () {
            return post(d.path + "/delete", { endpoint: endpoint, language: d.lang });
          });
        })
        .then(function (answer) { show(false); say(answer.message || d.off); })
        .catch(function () { say(d.failed); })
        .then(done);
      return;
    }
    Notification.requestPermission()
      .then(function (permission) {
        if (permission !== "granted") throw new Error("blocked");
        return ready;
      })
      .then(function (reg) {
        return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key(d.key) });
      })
      .then(function (sub) {
        return post(d.path, { subscription: sub.toJSON(), language: d.lang, receive: choice.value });
      })
      .then(function (answer) {
        if (!answer.ok) throw new Error(answer.message || d.failed);
        show(true);
        say(answer.message);
      })
      .catch(function (error) {
        say(error && error.message === "blocked" ? d.blocked : (error && error.message) || d.failed);
      })
      .then(done);
  });
})();
