//! Headless Chromium (Debian's `chromium`, scripts/peers/chromium.sh) driven over the DevTools
//! protocol: a WebSocket and JSON commands (`Page.navigate`, `Runtime.evaluate`,
//! `Page.captureScreenshot`), nothing more. The crates that wrap the whole protocol
//! (chromiumoxide, headless_chrome) compile its generated types, many minutes on a 2-core machine,
//! for the four commands these tests send.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// One protocol command's longest wait.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The browser binary: `NETGW_CHROMIUM`, else `chromium` on PATH. Missing: the test fails, naming
/// the script that installs it.
fn chromium() -> String {
    let bin = std::env::var("NETGW_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let ok = Command::new(&bin)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "headless Chromium not found ({bin}): run `scripts/peers/chromium.sh install` (Debian package chromium)"
    );
    bin
}

impl Browser {
    /// A fresh headless browser (own profile) with one page of `width` x `height`.
    pub fn launch(width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(chromium())
            .args([
                "--headless",
                // Tests run as root in containers, where Chromium's sandbox cannot start.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-sync",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting chromium");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("chromium did not print its DevTools address within 60 s");
        let (ws, _) = tungstenite::connect(url.as_str()).expect("connecting to chromium");
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let mut b = Browser {
            child,
            ws,
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}));
        let id = target["targetId"].as_str().unwrap().to_owned();
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_owned();
        b.viewport(width, height, false);
        b
    }

    /// Send one command (to the page once attached) and wait for its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::Text(msg.to_string().into()))
            .expect("sending to chromium");
        let start = Instant::now();
        loop {
            assert!(
                start.elapsed() < CALL_TIMEOUT,
                "chromium did not answer {method} within {CALL_TIMEOUT:?}"
            );
            let text = match self.ws.read() {
                Ok(Message::Text(t)) => t,
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(e) => panic!("reading from chromium: {e}"),
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] != json!(id) {
                continue; // an event, or another command's answer
            }
            if let Some(e) = v.get("error") {
                return json!({"error": e});
            }
            return v["result"].clone();
        }
    }

    pub fn viewport(&mut self, width: u32, height: u32, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        );
    }

    /// A JavaScript expression's value (promises awaited); `Err` with the exception's text.
    pub fn try_eval(&mut self, js: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("error") {
            return Err(e.to_string());
        }
        if let Some(e) = r.get("exceptionDetails") {
            return Err(e.to_string());
        }
        Ok(r["result"]["value"].clone())
    }

    pub fn eval(&mut self, js: &str) -> Value {
        self.try_eval(js)
            .unwrap_or_else(|e| panic!("evaluating {js}: {e}"))
    }

    pub fn goto(&mut self, url: &str) {
        let r = self.call("Page.navigate", json!({"url": url}));
        assert!(r.get("error").is_none(), "navigating to {url}: {r}");
        self.wait_for("document.readyState === 'complete'", "the page to load");
    }

    /// Poll `cond` (JavaScript, true when done) every 100 ms for at most 90 s. A navigation in
    /// between (the old document gone) counts as not yet.
    pub fn wait_for(&mut self, cond: &str, what: &str) {
        let start = Instant::now();
        loop {
            if self.try_eval(cond).is_ok_and(|v| v == json!(true)) {
                return;
            }
            if start.elapsed() > Duration::from_secs(90) {
                let page = self
                    .try_eval("location.href + '\\n' + document.body.innerText")
                    .unwrap_or_default();
                panic!("waited 90 s for {what} ({cond}); the page:\n{page}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Click the element `selector` (as a keyboard user would: focus, then activate).
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let found = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return false; e.focus(); e.click(); return true; }})()"
        ));
        assert_eq!(found, json!(true), "no element {selector} to click");
    }

    /// A real mouse click (pressed and released) at the middle of the element `selector`.
    pub fn mouse_click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = match (at[0].as_f64(), at[1].as_f64()) {
            (Some(x), Some(y)) => (x, y),
            _ => panic!("no element {selector} to click"),
        };
        for kind in ["mousePressed", "mouseReleased"] {
            let r = self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
            assert!(r.get("error").is_none(), "{kind} at {x},{y}: {r}");
        }
    }

    pub fn screenshot(&mut self, path: &Path) {
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let data = r["data"].as_str().expect("a screenshot");
        let png = data_encoding::BASE64.decode(data.as_bytes()).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}
