"""The web console in a real browser: what partners, staff and attackers do, against a live
`backoffice dev` (ops/browser-tests starts it and sets BACKOFFICE_URL, CREDENTIALS, SCREENSHOTS).

Every page a scenario visits is checked with axe-core: a serious or critical violation fails the
run. Screenshots of the main pages are taken at 1280 and 360 px wide.
"""

import base64
import email
import glob
import hashlib
import hmac
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
import uuid
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import (
    JavascriptException, NoAlertPresentException, StaleElementReferenceException, TimeoutException,
    WebDriverException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

URL = os.environ["BACKOFFICE_URL"]
CREDENTIALS = json.load(open(os.environ["CREDENTIALS"]))
SCREENSHOTS = os.environ["SCREENSHOTS"]
MAIL_DIR = os.environ.get("MAIL_DIR", "")  # where the SMTP server ops/browser-tests starts writes what it accepts
PASSWORDS = CREDENTIALS["console_sign_ins"]
SECOND_FACTORS = CREDENTIALS.get("console_second_factors", {})
WIDE, NARROW = 1280, 360


class Browser:
    """One headless Chromium with its own cookies (one person at one desk)."""

    def __init__(self):
        options = webdriver.ChromeOptions()
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={WIDE},900"]:
            options.add_argument(argument)
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        self.driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
        self.driver.implicitly_wait(2)
        self.accessibility_failures = []

    def open(self, path):
        self.driver.get(URL + path)
        self.check_accessibility()

    def path(self):
        return self.driver.current_url[len(URL):]

    def field(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def fill(self, values):
        for element_id, value in values.items():
            element = self.field(element_id)
            element.clear()
            element.send_keys(value)

    def submit(self, form_selector="main form.stack"):
        """Clicks the form's submit button and waits for the answer's page to load (Chromium returns
        from the click before the navigation commits), then checks it with axe-core."""
        page = self.driver.find_element(By.TAG_NAME, "html")
        self.driver.find_element(By.CSS_SELECTOR, form_selector + " button[type=submit]").click()
        try:
            WebDriverWait(self.driver, 10).until(lambda driver: self.is_stale(page))
        except TimeoutException:
            pass  # answered without a new page
        WebDriverWait(self.driver, 10).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete")
        self.check_accessibility()

    @staticmethod
    def is_stale(element):
        try:
            element.tag_name
            return False
        except (StaleElementReferenceException, WebDriverException):
            return True  # Chromium may also answer that the node no longer belongs to the document

    def wait_for_path(self, prefix):
        """Waits (up to 5 s) for a click's navigation to reach a path starting with `prefix`."""
        try:
            WebDriverWait(self.driver, 5).until(lambda driver: self.path().startswith(prefix))
        except Exception:
            pass

    def set_time(self, element_id, when):
        """A datetime-local field set to `when` (UTC, as the console's fields read), as a date picker would."""
        self.driver.execute_script("arguments[0].value = arguments[1]", self.field(element_id), when.strftime("%Y-%m-%dT%H:%M"))

    def choose(self, element_id, value):
        Select(self.field(element_id)).select_by_value(value)

    def text(self, selector="main"):
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def heading(self):
        return self.text("main h1")

    def sign_in(self, email, password, secret=None):
        """Email and password; then, when the console asks, the code of the operator's TOTP secret."""
        self.fill({"email": email, "password": password})
        self.submit()
        secret = secret or SECOND_FACTORS.get(email)
        if self.path().startswith("/console/sign-in/code"):
            expect(secret is not None, f"{email} has a TOTP secret to answer the code step")
            self.fill({"code": totp(secret)})
            self.submit()

    def no_alert(self):
        try:
            self.driver.switch_to.alert
            return False
        except NoAlertPresentException:
            return True

    def check_accessibility(self):
        """axe-core on the current page: serious and critical violations are failures. Waits for the
        page to load first; a page that a click's navigation replaced while axe-core was injected is
        checked again once loaded."""
        axe = Axe(self.driver)
        for attempt in range(3):
            WebDriverWait(self.driver, 10).until(
                lambda driver: driver.execute_script("return document.readyState") == "complete")
            try:
                axe.inject()
                result = axe.run()
                break
            except JavascriptException:
                if attempt == 2:
                    raise
                time.sleep(0.5)
        for violation in result["violations"]:
            if violation["impact"] in ("serious", "critical"):
                targets = [", ".join(node["target"]) for node in violation["nodes"]][:3]
                failure = f"{self.path().split('?')[0]}: {violation['id']} ({violation['impact']}): {violation['help']} at {targets}"
                if failure not in self.accessibility_failures:
                    self.accessibility_failures.append(failure)

    def screenshot(self, name):
        """The page at 1280 and 360 px wide; at 360 it must not scroll sideways."""
        os.makedirs(SCREENSHOTS, exist_ok=True)
        for width in (WIDE, NARROW):
            self.driver.set_window_size(width, 900)
            height = self.driver.execute_script("return document.documentElement.scrollHeight")
            self.driver.set_window_size(width, max(600, min(height + 100, 2400)))
            self.driver.execute_script("window.scrollTo(0, 0)")
            self.driver.save_screenshot(os.path.join(SCREENSHOTS, f"{name}-{width}.png"))
            if width == NARROW:
                overflow = self.driver.execute_script("return document.documentElement.scrollWidth")
                expect(overflow <= NARROW + 1, f"{name} fits 360 px (its width is {overflow})")
        self.driver.set_window_size(WIDE, 900)

    def fits_narrow(self):
        """The current page at 360 px wide must not scroll sideways."""
        self.driver.set_window_size(NARROW, 900)
        overflow = self.driver.execute_script("return document.documentElement.scrollWidth")
        expect(overflow <= NARROW + 1, f"{self.path().split('?')[0]} fits 360 px (its width is {overflow})")
        self.driver.set_window_size(WIDE, 900)

    def quit(self):
        self.driver.quit()


failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)
        print(f"    FAILED: {what}", file=sys.stderr)


def totp(secret, at=None):
    """RFC 6238's code (six digits, 30-second steps, HMAC-SHA1) of a base32 secret, as an app computes it."""
    cleaned = secret.replace(" ", "").upper()
    key = base64.b32decode(cleaned + "=" * (-len(cleaned) % 8))
    digest = hmac.new(key, struct.pack(">Q", int((at or time.time()) // 30)), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return f"{(struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def api(method, path, token, body=None):
    """The service's API, as a script or the app's backend calls it (a change with a fresh Idempotency-Key)."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if method != "GET":
        headers["Idempotency-Key"] = str(uuid.uuid4())
    request = urllib.request.Request(URL + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def owner_sql(statement):
    """Runs SQL as the dev cluster's owner (to age a session, as time would)."""
    psql = shutil.which("psql") or sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    subprocess.run([psql, CREDENTIALS["superuser_database_url"], "-qc", statement], check=True)


def partner_admin_creates_a_good(browser):
    """A partner admin signs in (from a page she asked for), creates a good whose name is markup,
    sees it as text with prices in dollars, and fixes a form the server refused."""
    browser.open("/console/goods")
    expect(browser.path().startswith("/console/sign-in?next="), "a page without a session goes to sign-in")
    browser.screenshot("sign-in")
    browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
    expect(browser.path() == "/console/goods", f"back at the page asked for (at {browser.path()})")
    browser.driver.find_element(By.LINK_TEXT, "New good").click()
    browser.check_accessibility()
    hostile = "<img src=x onerror=alert(1)>"
    sku = "XSS-" + uuid.uuid4().hex[:6].upper()
    browser.fill({"sku": "bad sku", "name": hostile, "category": "snacks", "price": "9.99", "stock": "7"})
    browser.submit()
    expect("must be 1" in browser.text("#sku-error"), "the refused sku's message is next to the field")
    expect(browser.field("name").get_attribute("value") == hostile, "the input is kept")
    expect(browser.field("sku").get_attribute("aria-invalid") == "true", "the field is marked invalid")
    browser.screenshot("good-form-errors")
    browser.fill({"sku": sku})
    browser.submit()
    expect(f"Created {hostile} ({sku}) as a draft." in browser.text(".flash"), "a flash says what was created, as text")
    expect(browser.no_alert(), "no script ran from the good's name")
    browser.open("/console/goods")
    expect(hostile in browser.text("table"), "the name shows as text in the list")
    expect("$9.99" in browser.text("table"), "the price in dollars")
    expect(browser.no_alert(), "no script ran from the list")
    browser.screenshot("goods")


def partner_admin_imports_goods(browser):
    """A partner admin uploads a CSV with one bad line, sees it by its number, fixes the file,
    checks it again and applies it."""
    tag = uuid.uuid4().hex[:6].upper()
    header = "sku,name,description,category,price_cents,price_fitpoints,stock,status,image_urls"
    good = f"IMP-{tag}-1,Oat bar,,snacks,199,,40,active,"
    bad = f"IMP-{tag}-2,Whey tub,,protein,lots,,12,active,"
    fixed = f"IMP-{tag}-2,Whey tub,,protein,2999,,12,active,"

    def upload(lines):
        path = os.path.join(tempfile.mkdtemp(), "goods.csv")
        with open(path, "w") as file:
            file.write("\n".join([header] + lines) + "\n")
        browser.open("/console/goods/import")
        browser.field("file").send_keys(path)
        browser.driver.find_element(By.CSS_SELECTOR, "main form.stack button[type=submit]").click()  # sent by the page's script
        browser.wait_for_path("/console/goods/import/")
        browser.check_accessibility()

    upload([good, bad])
    expect("1 refused" in browser.text("#import-summary"), f"the check counts the bad line (saw {browser.text('main')[:160]!r})")
    issues = browser.text("#import-issues")
    expect("3" in issues and f"IMP-{tag}-2" in issues and "price_cents" in issues, f"the bad line by number, SKU and field ({issues!r})")
    browser.screenshot("goods-import-check")
    upload([good, fixed])
    expect("0 refused" in browser.text("#import-summary"), "the fixed file checks clean")
    browser.submit("form[action$='/apply']")
    expect("Imported: 2 created" in browser.text(".flash"), f"applied (saw {browser.text('main')[:160]!r})")
    browser.open(f"/console/goods?q=IMP-{tag}")
    expect("Whey tub" in browser.text() and "Oat bar" in browser.text(), "both goods are listed, found by SKU")
    # Both withdrawn in one go: ticked, checked first (nothing changed), then archived from the check's page.
    for box in browser.driver.find_elements(By.CSS_SELECTOR, "#goods-bulk input[type=checkbox]"):
        box.click()
    browser.submit("#goods-bulk")  # its first button: check first
    expect("2 would be archived, 0 refused." in browser.text("#bulk-summary"), f"checked (saw {browser.text('main')[:160]!r})")
    browser.screenshot("goods-bulk-check")
    browser.submit("#bulk-confirm")
    expect("2 archived, 0 refused." in browser.text("#bulk-summary"), f"archived (saw {browser.text('main')[:160]!r})")
    browser.open(f"/console/goods?q=IMP-{tag}&status=archived")
    expect("Whey tub" in browser.text() and "Oat bar" in browser.text(), "both are archived")


def partner_admin_ships_an_order(browser):
    """A partner admin takes a paid order from the board, accepts it, ships it with a tracking
    number (refused first without one), and reads the order's audit trail."""
    browser.open("/console/orders")
    expect(browser.heading() == "Orders", "the orders board")
    browser.screenshot("orders")
    links = browser.driver.find_elements(By.CSS_SELECTOR, "table tbody a")
    expect(links, "the demo shop has paid orders to accept")
    if not links:
        return
    links[0].click()
    browser.check_accessibility()
    order_path = browser.path()
    browser.submit("form[action$='/accept']")
    expect("is accepted" in browser.text(".flash"), "accepted, with a flash")
    browser.fill({"carrier": "UPS"})
    browser.driver.execute_script("document.getElementById('tracking_number').removeAttribute('required')")
    browser.submit("form[action$='/ship']")
    expect(browser.field("tracking_number").get_attribute("aria-invalid") == "true", "a ship without tracking is refused next to the field")
    browser.fill({"tracking_number": "1Z999AA10123456784"})
    browser.submit("form[action$='/ship']")
    expect(browser.path() == order_path and "is shipped" in browser.text(".flash"), "shipped")
    trail = browser.text("table.trail")
    expect("orders.accept" in trail and "orders.ship" in trail and "console" in trail, "the trail shows both moves, made in the console")
    browser.screenshot("order")


def partner_admin_replays_a_webhook(browser):
    """A partner admin registers an endpoint (its secret shown once), an order is placed, and its
    event is delivered within seconds (here to the console's own server, which answers 404); she
    opens the endpoint's deliveries, reads the attempt on the delivery's page and replays it."""
    browser.open("/console/webhook-endpoints")
    if browser.path().startswith("/console/sign-in"):  # when run alone (ONLY=…)
        browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
    hook = URL + "/hooks/browser-test"
    browser.fill({"url": hook})
    browser.field("event-order.placed").click()
    browser.submit("main form.stack")
    expect(browser.text("#endpoint-secret").startswith("whsec_"), "the new endpoint's secret is shown")
    place_an_order()
    browser.open("/console/webhook-endpoints")
    browser.driver.find_element(By.CSS_SELECTOR, f"a[href^='/console/webhook-endpoints/'] code").click()
    browser.check_accessibility()
    endpoint_path = browser.path()
    for _ in range(30):  # the sender looks every second
        if "HTTP 404" in browser.text():
            break
        time.sleep(0.5)
        browser.open(endpoint_path)
    expect("HTTP 404" in browser.text("#webhook_deliveries"), "the delivery is listed with its answer")
    browser.screenshot("webhook-endpoint")
    browser.driver.find_element(By.CSS_SELECTOR, "#webhook_deliveries tbody a").click()
    browser.check_accessibility()
    expect("order.placed" in browser.heading() and "HTTP 404" in browser.text("#webhook_attempts"), "the attempt")
    browser.screenshot("webhook-delivery")
    browser.submit("form[action$='/replay']")
    expect("replayed" in browser.text(".flash"), "replayed, with a flash")


def partner_admin_filters_the_board(browser):
    """A partner admin narrows the board to one good's orders of $10 or more placed this year; the
    state tabs keep the filter; the filter is saved as a named view, listed on the board; clearing
    it shows the board again."""
    browser.open("/console/orders?status=paid")
    if browser.path().startswith("/console/sign-in"):  # when run alone (ONLY=…)
        browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
        browser.open("/console/orders?status=paid")
    sku = api("GET", "/v1/goods?limit=1", CREDENTIALS["partners"][0]["partner_admin"])["items"][0]["sku"]
    browser.fill({"sku": sku, "min_usd": "10"})
    browser.submit("form.filters")
    expect("filtered" in browser.text("main h2") and f"sku={sku}" in browser.path(), "the board is filtered")
    browser.screenshot("orders-filtered")
    tab = browser.driver.find_element(By.CSS_SELECTOR, "nav.tabs a[href*='status=shipped']")
    expect(f"sku={sku}" in tab.get_attribute("href"), "the tabs keep the filter")
    browser.fill({"view-name": "Big orders of one good"})
    browser.submit("#save-view")
    expect("Saved the view" in browser.text(".flash") and f"sku={sku}" in browser.path(), "saved, the board as it was")
    view = browser.driver.find_element(By.LINK_TEXT, "Big orders of one good")
    expect(f"sku={sku}" in view.get_attribute("href"), "the view is listed and opens the same filter")
    browser.check_accessibility()
    browser.driver.find_element(By.LINK_TEXT, "Clear the filter").click()
    browser.check_accessibility()
    expect("filtered" not in browser.text("main h2"), "cleared")


def partner_admin_refunds_one_line(browser):
    """A partner admin opens a shipped order, refunds one unit of its first line as a return
    (refused first without the confirmation), and sees the refund listed on the order."""
    browser.open("/console/orders?status=shipped")
    if browser.path().startswith("/console/sign-in"):  # when run alone (ONLY=…)
        browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
        browser.open("/console/orders?status=shipped")
    links = [a.get_attribute("href") for a in browser.driver.find_elements(By.CSS_SELECTOR, "table tbody a")]
    expect(links, "the demo shop has shipped orders")
    for link in links:
        browser.driver.get(link)
        if browser.driver.find_elements(By.ID, "refund-part"):
            break
    expect(browser.driver.find_elements(By.ID, "refund-part"), "a shipped order offers a partial refund")
    browser.check_accessibility()
    order = browser.path()
    browser.fill({"units_1": "1", "refund-part-reason": "One unit arrived damaged"})
    browser.driver.find_element(By.ID, "restock").click()
    browser.submit("#refund-part")
    expect(browser.field("confirm_refund_part").get_attribute("aria-invalid") == "true",
           "an unconfirmed refund is refused next to its box")
    browser.fill({"units_1": "1"})
    browser.driver.find_element(By.ID, "restock").click()
    browser.driver.find_element(By.ID, "confirm_refund_part").click()
    browser.submit("#refund-part")
    expect(browser.path() == order and "Refunded" in browser.text(".flash"), "refunded, with a flash")
    expect("#1 × 1 (returned to stock)" in browser.text("#refunds"), "the refund is listed as a return of line 1")
    browser.check_accessibility()
    browser.fits_narrow()
    browser.screenshot("order-refunded")


def partner_admin_ships_twenty_at_once(browser):
    """A partner admin accepts the paid orders on the board's first page in one go, then ticks 20
    orders to ship, gives each its tracking number and one carrier, checks them first (nothing
    changes) and ships the 20 from the check's page; each order is shipped."""
    for _ in range(20):
        place_an_order()
    browser.open("/console/orders?status=paid")
    if browser.path().startswith("/console/sign-in"):  # when run alone (ONLY=…)
        browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
        browser.open("/console/orders?status=paid")
    for box in browser.driver.find_elements(By.CSS_SELECTOR, "#bulk input[type=checkbox]"):
        box.click()
    browser.driver.find_element(By.CSS_SELECTOR, "#bulk button[value=no]").click()
    expect("refused" in browser.text("#bulk-summary"), "the bulk's page lists each order's outcome")
    browser.open("/console/orders?status=accepted")
    rows = browser.driver.find_elements(By.CSS_SELECTOR, "#bulk tbody tr")[:20]
    expect(len(rows) == 20, f"20 orders to ship (found {len(rows)})")
    for index, row in enumerate(rows):
        row.find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
        row.find_element(By.CSS_SELECTOR, "input[name^=tracking_]").send_keys(f"1ZBULK{index:04d}")
    browser.fill({"bulk-carrier": "UPS"})
    browser.check_accessibility()
    browser.driver.find_element(By.CSS_SELECTOR, "#bulk button[value=yes]").click()
    expect(browser.text("#bulk-summary").startswith("20 would ship"), "the check says all 20 would ship")
    browser.check_accessibility()
    browser.screenshot("orders-bulk-check")
    browser.submit("#bulk-confirm")
    expect(browser.text("#bulk-summary") == "20 done, 0 refused.", "the 20 are shipped")
    expect(browser.text("#bulk-outcomes").count("Shipped") == 20, "each order is shipped")
    browser.check_accessibility()
    browser.fits_narrow()
    browser.screenshot("orders-bulk-shipped")


def partner_admin_issues_a_narrow_token(browser):
    """A partner admin issues a stock script's token that may only read orders, accepted only from this
    machine: the secret works for orders, is refused the goods (insufficient_scope), and the list says
    what it may do and from where."""
    browser.open("/console/tokens")
    if browser.path().startswith("/console/sign-in"):  # when run alone (ONLY=…)
        browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
        browser.open("/console/tokens")
    browser.fill({"name": "orders reader"})
    browser.driver.find_element(By.CSS_SELECTOR, "details.token-limits summary").click()
    browser.driver.find_element(By.ID, "scope_orders:read").click()
    browser.fill({"allowed_addresses": "127.0.0.1 ::1"})
    browser.check_accessibility()
    browser.screenshot("tokens-narrow")
    browser.submit()
    secret = browser.field("token-secret").get_attribute("value")
    expect(secret.startswith("bo_"), "the secret is shown once")
    expect(len(api("GET", "/v1/orders", secret)["items"]) >= 0, "it reads the orders")
    try:
        api("GET", "/v1/goods", secret)
        expect(False, "the goods are refused to an orders-only token")
    except urllib.error.HTTPError as refusal:
        expect(refusal.code == 403 and json.load(refusal)["code"] == "insufficient_scope", "403 insufficient_scope")
    browser.open("/console/tokens")
    row = browser.text("#tokens")
    expect("orders:read" in row and "127.0.0.1/32, ::1/128" in row, "the list shows its scope and networks")
    browser.check_accessibility()
    browser.screenshot("tokens-listed")


def place_an_order():
    """An order of the first partner's first good paid by card, as the app's backend places it."""
    goods = api("GET", "/v1/goods?limit=50", CREDENTIALS["partners"][0]["partner_admin"])["items"]
    good = next(g for g in goods if g.get("price_cents") and g["stock"] > 0 and g["status"] == "active")
    customers = api("GET", "/v1/customers?limit=50", CREDENTIALS["tokens"]["backend_manager"])["items"]
    customer = next(c for c in customers if c["status"] == "active")
    api("POST", "/v1/checkout", CREDENTIALS["tokens"]["app_service"], {
        "customer_id": customer["id"], "payment_method": "4242424242424242",
        "lines": [{"good_id": good["id"], "quantity": 1, "pay_in": "usd", "expected_unit_price_cents": good["price_cents"]}],
        "shipping": {"name": "Ann Browser", "address": {"line1": "1 Main St", "city": "Austin", "region": "TX",
                                                        "postal_code": "73301", "country": "US"}}})


def managers_approve_a_large_correction(manager, deputy):
    """A manager corrects an account's FitPoints by 50,000: the correction is held for a second
    person (a pending banner on the account, nothing credited); the manager cannot approve it; a
    second manager approves it in the queue, and the points are credited once."""
    if not manager.path().startswith("/console/") or manager.path().startswith("/console/sign-in"):
        manager.open("/console/sign-in")
        manager.sign_in("manager@healthtrack.example", PASSWORDS["manager@healthtrack.example"])
    customers = api("GET", "/v1/customers?limit=50", CREDENTIALS["tokens"]["backend_manager"])["items"]
    customer = [c for c in customers if c["status"] == "active"][-1]["id"]
    before = api("GET", f"/v1/customers/{customer}/fitpoints", CREDENTIALS["tokens"]["backend_manager"])["balance"]
    manager.open(f"/console/accounts/{customer}/fitpoints")
    manager.fill({"points": "50000", "reason": "Steps lost in the March sync outage"})
    manager.submit()
    expect("second person" in manager.text(".flash"), "the correction is held, and the flash says so")
    expect("+50,000" in manager.text("#pending-approvals"), "the account shows the pending correction")
    expect(f"{before:,}" in manager.text("#balance"), "nothing is credited while it is held")
    manager.check_accessibility()
    manager.screenshot("approval-pending")
    manager.open("/console/approvals")
    request = manager.driver.find_element(By.CSS_SELECTOR, "#approvals li")
    expect("(by you)" in request.text and not request.find_elements(By.XPATH, ".//button[starts-with(., 'Approve')]"),
           "the requester is offered no approval of their own request")
    deputy.open("/console/sign-in")
    deputy.sign_in("deputy@healthtrack.example", PASSWORDS["deputy@healthtrack.example"])
    deputy.open("/console/approvals")
    deputy.check_accessibility()
    deputy.screenshot("approvals")
    deputy.fill({deputy.driver.find_element(By.CSS_SELECTOR, "#approvals li input[name=note]").get_attribute("id"):
                 "Matches the outage ticket"})
    deputy.driver.find_element(By.XPATH, "//ul[@id='approvals']/li[1]//button[starts-with(., 'Approve')]").click()
    WebDriverWait(deputy.driver, 5).until(lambda driver: driver.find_elements(By.CSS_SELECTOR, ".flash"))
    expect("took effect" in deputy.text(".flash"), "approved: the change took effect")
    expect("approved" in deputy.text("#approvals li"), "the queue shows it approved")
    after = api("GET", f"/v1/customers/{customer}/fitpoints", CREDENTIALS["tokens"]["backend_manager"])["balance"]
    expect(after == before + 50000, f"credited once ({before} → {after})")
    manager.open(f"/console/accounts/{customer}/fitpoints")
    expect(not manager.driver.find_elements(By.ID, "pending-approvals"), "no pending banner once approved")
    deputy.screenshot("approvals-decided")


def manager_locks_and_unlocks(browser):
    """A backend manager finds an active account, locks it with a reason (refused first without
    one), and unlocks it; the account's history shows both."""
    browser.open("/console/sign-in")
    browser.sign_in("manager@healthtrack.example", PASSWORDS["manager@healthtrack.example"])
    browser.open("/console/accounts?status=active")
    browser.screenshot("accounts")
    browser.driver.find_element(By.CSS_SELECTOR, "table tbody a").click()
    browser.check_accessibility()
    browser.driver.execute_script("document.getElementById('lock-reason').removeAttribute('required')")
    browser.submit("form[action$='/lock']")
    expect(browser.field("lock-reason").get_attribute("aria-invalid") == "true", "a lock without a reason is refused next to the field")
    browser.fill({"lock-reason": "Suspected account takeover"})
    browser.submit("form[action$='/lock']")
    expect("is locked" in browser.text(".flash"), "locked, with a flash")
    expect("Suspected account takeover" in browser.text(".notice"), "the open lock and its reason")
    browser.fill({"unlock-reason": "Identity confirmed by phone"})
    browser.submit("form[action$='/unlock']")
    expect("is active" in browser.text(".flash"), "unlocked")
    history = browser.text("table.trail")
    expect("accounts.lock" in history and "accounts.unlock" in history, "the history shows the lock and the unlock")
    browser.screenshot("account")


def manager_messages_two_accounts(browser):
    """A backend manager ticks two accounts on the list and sends them a notice in the app with one
    reason: refused in place without a subject, then checked first (nothing sent), then sent from
    the check's page; the app reads the notice."""
    browser.open("/console/accounts?status=active&email_prefix=ada")
    if browser.path().startswith("/console/sign-in"):  # when run alone (ONLY=…)
        browser.sign_in("manager@healthtrack.example", PASSWORDS["manager@healthtrack.example"])
        browser.open("/console/accounts?status=active&email_prefix=ada")
    ids = [box.get_attribute("name").removeprefix("customer_")
           for box in browser.driver.find_elements(By.CSS_SELECTOR, "#accounts-bulk tbody input[type=checkbox]")[:2]]

    def tick_and_write(subject):
        browser.open("/console/accounts?status=active&email_prefix=ada")
        for customer in ids:
            browser.driver.find_element(By.ID, f"customer_{customer}").click()
        browser.fill({"bulk-reason": "Warehouse outage", "bulk-subject": subject,
                      "bulk-body": "We are sorry.\nYour order ships on Monday."})

    tick_and_write("")
    browser.driver.find_element(By.CSS_SELECTOR, "#bulk-message button[value=yes]").click()
    expect("Subject: is required" in browser.text(".error-summary"), "a notice without a subject is refused, saying why")
    browser.check_accessibility()
    tick_and_write("Your order is delayed")
    browser.check_accessibility()
    browser.screenshot("accounts-notice")
    browser.driver.find_element(By.CSS_SELECTOR, "#bulk-message button[value=yes]").click()
    expect(browser.text("#bulk-summary") == "2 would be messaged, 0 refused.", "the check says both would get it")
    expect(api("GET", f"/v1/customers/{ids[0]}/notices", CREDENTIALS["tokens"]["app_service"])["items"] == [],
           "a check sends nothing")
    browser.check_accessibility()
    browser.submit("#bulk-confirm")
    expect(browser.text("#bulk-summary") == "2 messaged, 0 refused.", "both are sent the notice")
    browser.check_accessibility()
    browser.fits_narrow()
    browser.screenshot("accounts-notice-sent")
    for customer in ids:
        notices = api("GET", f"/v1/customers/{customer}/notices", CREDENTIALS["tokens"]["app_service"])["items"]
        expect([(n["subject"], n["body"]) for n in notices] == [("Your order is delayed", "We are sorry.\nYour order ships on Monday.")],
               f"the app reads the notice ({notices})")


def manager_reads_a_health_profile(browser):
    """A backend manager opens a customer's health profile: asked why first (nothing read yet), then
    the profile and its weight chart; the read appears in "who read this customer's data"; opening it
    again in the session asks nothing and is recorded again."""
    browser.open("/console/accounts?status=active")
    browser.driver.find_element(By.CSS_SELECTOR, "table tbody a").click()
    browser.driver.find_element(By.PARTIAL_LINK_TEXT, "Health profile").click()
    browser.check_accessibility()
    expect(browser.driver.find_elements(By.ID, "purpose-form"), "asked why before anything is read")
    expect(not browser.driver.find_elements(By.ID, "health-values"), "no value shown before the purpose")
    browser.screenshot("health-purpose")
    browser.driver.find_element(By.ID, "purpose-support_request").click()
    browser.submit("#purpose-form")
    expect("support request" in browser.text("#read-purpose").lower(), "the page says why it was read")
    expect(browser.driver.find_elements(By.CSS_SELECTOR, "#weight-chart svg.chart polyline"), "the weight chart")
    expect("kg" in browser.text("#health-values"), "the values, with their units")
    readings = browser.driver.find_elements(By.CSS_SELECTOR, "#accesses tbody tr")
    expect(readings and "console" in readings[0].text and "support request" in readings[0].text.lower(),
           "the read is listed in who read this customer's data")
    browser.screenshot("health-profile")
    path = browser.path()
    browser.open(path)
    expect(not browser.driver.find_elements(By.ID, "purpose-form"), "not asked again in the session")
    again = browser.driver.find_elements(By.CSS_SELECTOR, "#accesses tbody tr")
    expect(len(again) == len(readings) + 1, f"each opening is recorded ({len(readings)} then {len(again)})")


def moderator_decides_a_case(browser):
    """A forum moderator takes the next case of the queue (the most severe, then the oldest), reads
    it, removes the comment and locks its author with a ground (refused first without one); the
    statement of reasons is shown on the case."""
    email = "moderator@healthtrack.example"
    browser.open("/console/sign-in")
    browser.sign_in(email, PASSWORDS[email])
    browser.open("/console/moderation")
    browser.check_accessibility()
    rows = browser.driver.find_elements(By.CSS_SELECTOR, "#moderation-queue tbody tr")
    expect(rows and "critical" in rows[0].text, f"the most severe case first ({rows[0].text if rows else 'none'!r})")
    browser.screenshot("moderation-queue")
    browser.submit("form[action='/console/moderation/next']")
    browser.wait_for_path("/console/moderation/cases/")
    browser.check_accessibility()
    expect("You hold this case" in browser.text(".flash"), "taken: held for 30 minutes")
    expect(browser.text("#case-content"), "the content as it was shown")
    browser.driver.find_element(By.ID, "decision-lock").click()
    browser.fill({"explanation": "Insulting another member after two warnings."})
    browser.submit("#decision-form")
    expect(browser.field("ground").get_attribute("aria-invalid") == "true", "a decision without a ground is refused next to the field")
    browser.choose("ground", "respect")
    browser.submit("#decision-form")
    expect("Decided: lock" in browser.text(".flash"), "decided, with a flash")
    statement = browser.text(".statement")
    expect("lock the author's account" in statement and "Respect others" in statement and "appeal" in statement,
           f"the statement of reasons: decision, ground, how to appeal ({statement[:120]!r})")
    expect("the account is locked" in statement, "the statement says the account is locked")
    browser.check_accessibility()
    browser.screenshot("moderation-case")


def auditor_filters_and_verifies(browser):
    """An auditor filters the log, opens an event, and verifies the chain."""
    browser.open("/console/sign-in")
    browser.sign_in("auditor@healthtrack.example", PASSWORDS["auditor@healthtrack.example"])
    browser.open("/console/audit")
    browser.fill({"action": "accounts.lock"})
    browser.submit("form.filters")
    actions = [cell.text for cell in browser.driver.find_elements(By.CSS_SELECTOR, "table.trail tbody td:nth-child(3)")]
    expect(actions and all(action == "accounts.lock" for action in actions), f"only the action filtered for ({actions[:3]})")
    browser.screenshot("audit")
    browser.driver.find_element(By.CSS_SELECTOR, "table.trail tbody a").click()
    browser.check_accessibility()
    expect("Before" in browser.text() and "After" in browser.text(), "the event's before and after")
    browser.open("/console/audit")
    browser.driver.find_element(By.LINK_TEXT, "Verify the chain").click()
    browser.check_accessibility()
    expect(browser.text("#verdict").startswith("Intact:"), f"the chain verifies (saw {browser.text('#verdict')!r})")


def auditor_reads_times_in_their_zone(browser):
    """An auditor (signed in) chooses Europe/Berlin on the Security page: the log's times show in Berlin's time with
    the offset that held then, the UTC instant in datetime and on hover; forms that read times say so."""
    browser.open("/console/security")
    browser.check_accessibility()
    Select(browser.field("time_zone")).select_by_value("Europe/Berlin")
    browser.submit("form[action$='/time-zone']")
    expect("Times now show in Europe/Berlin" in browser.text(".flash"), f"saved (saw {browser.text('main')[:200]!r})")
    expect(browser.text("#zone") == "Europe/Berlin", "the page names the zone")
    browser.screenshot("security")
    browser.open("/console/audit")
    expect("From (Europe/Berlin)" in browser.text("form.filters"), "the filter's times are read in the zone")
    shown = browser.driver.find_elements(By.CSS_SELECTOR, "table.trail tbody time")
    expect(shown, "the log lists times")
    for element in shown[:5]:
        instant = datetime.fromisoformat(element.get_attribute("datetime").replace("Z", "+00:00"))
        local = instant.astimezone(ZoneInfo("Europe/Berlin"))
        hours = int(local.utcoffset().total_seconds() // 3600)
        expected = local.strftime("%Y-%m-%d %H:%M") + f" UTC+{hours}"
        expect(element.text == expected, f"{element.get_attribute('datetime')} shows as {expected} (saw {element.text!r})")
        expect(element.get_attribute("title") == instant.strftime("%Y-%m-%d %H:%M:%S UTC"), "UTC on hover")


def forged_form_is_refused(browser):
    """A form sent without its CSRF token is refused, and nothing is created."""
    browser.open("/console/goods/new")
    sku = "FORGED-" + uuid.uuid4().hex[:6].upper()
    browser.fill({"sku": sku, "name": "Forged", "category": "snacks", "price": "1", "stock": "1"})
    browser.driver.execute_script("document.querySelector('main input[name=_csrf]').remove()")
    browser.submit()
    expect(browser.heading() == "This form has expired", f"refused (saw {browser.heading()!r})")
    browser.open("/console/goods")
    expect(sku not in browser.text(), "nothing was created")


def expired_session_comes_back(browser):
    """A session idle past the policy goes to sign-in, and back to the page after it."""
    owner_sql("UPDATE console_sessions SET last_seen_at = now() - interval '31 minutes' WHERE ended_at IS NULL")
    browser.open("/console/goods?status=draft")
    expect(browser.path().startswith("/console/sign-in?next="), "an expired session goes to sign-in")
    expect("session has ended" in browser.text(), "and says why")
    browser.sign_in("admin@green-grocer.example", PASSWORDS["admin@green-grocer.example"])
    expect(browser.path() == "/console/goods?status=draft", f"back at the page (at {browser.path()})")


def keyboard_only(browser):
    """The first Tab reaches the skip link, which moves focus to the page's content."""
    browser.open("/console/goods")
    body = browser.driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    focused = browser.driver.switch_to.active_element
    expect(focused.text == "Skip to content", f"the first Tab reaches the skip link (reached {focused.text!r})")
    outline = browser.driver.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    expect(outline not in ("none", ""), "focus is visible")


def staff_meets_another_tenant(staff, paths):
    """A partner's staff opening another tenant's order or good sees a 404 page, and the staff page
    (People) a 403 page, in the console's layout."""
    staff.open("/console/sign-in")
    staff.sign_in("staff@peak-protein.example", PASSWORDS["staff@peak-protein.example"])
    for path in paths:
        staff.open(path)
        expect(staff.heading() == "Not found", f"another tenant's {path} is a 404 page (saw {staff.heading()!r})")
        expect(staff.driver.find_elements(By.CSS_SELECTOR, "header nav"), "in the console's layout")
    staff.screenshot("not-found")
    staff.open("/console/people")
    expect(staff.heading() == "Not allowed", f"the staff page is a 403 page for staff (saw {staff.heading()!r})")
    expect("People" not in staff.text("header nav"), "and not in staff's navigation")


def mailed_link(recipient, seconds=30, marker="/console/invitation?key="):
    """The console link holding `marker` in the newest message the SMTP server accepted for `recipient`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        for name in sorted(os.listdir(MAIL_DIR), reverse=True) if os.path.isdir(MAIL_DIR) else []:
            if not name.endswith(".eml"):
                continue
            message = email.message_from_bytes(open(os.path.join(MAIL_DIR, name), "rb").read())
            if message["X-Envelope-To"] != recipient:
                continue
            text = next(part.get_payload(decode=True).decode() for part in message.walk() if part.get_content_type() == "text/plain")
            link = next((word for word in text.split() if marker in word), None)
            if link:
                return link
        time.sleep(0.2)
    return None


def staff_chooses_mail_and_unsubscribes(staff, visitor):
    """A partner's staff turns low-stock mail off on the Security page; then, from a browser that is
    signed in as nobody, the "Stop these mails" link of a notification the staff member was sent
    turns that mail's topic off too, and the Security page shows it off."""
    recipient = "staff@peak-protein.example"
    staff.open("/console/security")
    if staff.path().startswith("/console/sign-in"):
        staff.sign_in(recipient, PASSWORDS[recipient])
    expect(staff.field("mail-new_order").is_selected() and staff.field("mail-low_stock").is_selected(),
           "the staff's topics, on until turned off")
    expect(not staff.driver.find_elements(By.ID, "mail-webhook_endpoint_disabled"), "an admin's topic is not offered")
    staff.field("mail-low_stock").click()
    staff.screenshot("security-mail")
    staff.submit("#mail-choices")
    expect("You get 2 of 3 kinds of mail." in staff.text(".flash"), f"saved (saw {staff.text('main')[:160]!r})")
    expect(not staff.field("mail-low_stock").is_selected(), "low stock is off")
    link = mailed_link(recipient, marker="/console/unsubscribe?")
    expect(link is not None and link.startswith(URL + "/console/unsubscribe?"), f"a notification carries its link ({link!r})")
    if link is None:
        return
    topic = link.split("topic=")[1].split("&")[0]
    visitor.driver.get(link)
    visitor.check_accessibility()
    expect("Stop emailing s…@peak-protein.example" in visitor.text(), f"who and what, masked (saw {visitor.text()[:160]!r})")
    visitor.screenshot("unsubscribe")
    visitor.submit()
    expect("no longer gets this mail" in visitor.text(), f"done without signing in (saw {visitor.text()[:160]!r})")
    staff.open("/console/security")
    expect(not staff.field(f"mail-{topic}").is_selected(), f"{topic} is off on the Security page")


def platform_admin_invites_a_person(admin_browser, newcomer):
    """A platform admin (password and code) sees the tenants and invites people from People. A
    platform role (an auditor) is held for a second platform admin's approval: the flash says so,
    People shows it pending, and no email goes out. A shop's staff member is invited at once (the
    page says where the link went, never shows it); the test reads the email from the SMTP server,
    and the person opens its link, sets a password and signs in."""
    email = "admin@healthtrack.example"
    admin_browser.open("/console/sign-in")
    admin_browser.sign_in(email, PASSWORDS[email])
    admin_browser.open("/console/tenants")
    expect("green-grocer" in admin_browser.text("#tenants"), "the tenants")
    tenant = admin_browser.driver.find_element(
        By.XPATH, "//table[@id='tenants']//tr[td/code[text()='green-grocer']]/td[3]/code").text
    admin_browser.open("/console/people")
    auditor = f"auditor-{uuid.uuid4().hex[:6]}@healthtrack.example"
    admin_browser.fill({"email": auditor, "grant-reason": "Quarterly audit"})
    admin_browser.choose("role", "auditor")
    admin_browser.submit()
    expect("Held for a second person's approval" in admin_browser.text(".flash"), f"a platform role is held (saw {admin_browser.text('main')[:200]!r})")
    expect(f"Grant the platform role auditor to {auditor}" in admin_browser.text("#pending-approvals"), "People shows it pending")
    admin_browser.screenshot("people-grant-pending")
    expect(mailed_link(auditor, seconds=2) is None, "no invitation before the grant is approved")
    invitee = f"newcomer-{uuid.uuid4().hex[:6]}@green-grocer.example"
    admin_browser.fill({"email": invitee, "tenant_id": tenant})
    admin_browser.choose("role", "partner_staff")
    admin_browser.submit()
    expect("on its way to n…@green-grocer.example" in admin_browser.text(".flash"), f"says where it went (saw {admin_browser.text('main')[:200]!r})")
    expect("invitation?key=" not in admin_browser.driver.page_source, "the page never shows the link")
    link = mailed_link(invitee)
    expect(link is not None and link.startswith(URL + "/console/invitation?key="), f"the email carries the link (saw {link!r})")
    if link is None:
        return
    newcomer.driver.get(link)
    newcomer.check_accessibility()
    expect(invitee in newcomer.text(), "the invitation names the person")
    newcomer.fill({"password": "short", "confirm_password": "short"})
    newcomer.submit()
    expect(newcomer.field("password").get_attribute("aria-invalid") == "true", "a short password is refused next to the field")
    password = "a newcomer's own passphrase"
    newcomer.fill({"password": password, "confirm_password": password})
    newcomer.submit()
    expect("password is set" in newcomer.text(), "sent to sign-in")
    newcomer.sign_in(invitee, password)
    expect(not newcomer.path().startswith("/console/sign-in"), f"a shop's staff member is signed in (at {newcomer.path()})")


def lockout(browser):
    """After the policy's failed sign-ins, even the right password is refused, with the same answer."""
    email = "staff@green-grocer.example"
    browser.open("/console/sign-in")
    for attempt in range(5):
        browser.sign_in(email, f"wrong password {attempt}")
    wrong = browser.text(".error-summary")
    browser.sign_in(email, PASSWORDS[email])
    expect(browser.path().startswith("/console/sign-in"), "locked out: the right password is refused")
    expect(browser.text(".error-summary") == wrong, "with the same answer as a wrong password")


def manager_publishes_a_maintenance_notice(browser):
    """A manager composes a maintenance notice whose window starts 2 h away: publishing is refused
    in place (the notice period); a copy whose window starts 25 h away publishes and shows on the
    calendar."""
    now = datetime.now(timezone.utc)
    title = "Database upgrade " + uuid.uuid4().hex[:4]
    browser.open("/console/messages/new")
    browser.fill({"title": title, "body": "The app is read-only for an hour while we upgrade."})
    browser.choose("severity", "maintenance")
    browser.set_time("window_starts_at", now + timedelta(hours=2))
    browser.set_time("window_ends_at", now + timedelta(hours=3))
    browser.submit()
    expect(browser.heading().startswith(title), f"saved as a draft (at {browser.path()})")
    browser.submit("form[action$='/publish']")
    expect("at least 24 h before its window starts" in browser.text("#publish-error"), "the notice period, in place")
    expect("less than 24 h" in browser.text("#window-error"), "next to the window")
    browser.screenshot("message-refused")
    browser.driver.find_element(By.LINK_TEXT, "Draft a copy to change it").click()
    browser.check_accessibility()
    expect(browser.field("title").get_attribute("value") == title, "the copy is filled in")
    browser.set_time("window_starts_at", now + timedelta(hours=25))
    browser.set_time("window_ends_at", now + timedelta(hours=26))
    browser.submit()
    browser.submit("form[action$='/publish']")
    expect("Published" in browser.text(".flash"), "a notice 25 h ahead publishes")
    browser.open("/console/messages")
    expect(title in browser.text("table.calendar"), "it is on the calendar")
    browser.screenshot("messages")


def manager_runs_a_challenge(browser):
    """A manager creates and publishes a challenge, watches its leaderboard change as activity
    arrives through the API, previews the settlement, and settles it once the board is frozen."""
    now = datetime.now(timezone.utc)
    name = "Step it up " + uuid.uuid4().hex[:4]
    browser.open("/console/challenges/new")
    browser.fill({"name": name, "grace_hours": "0", "rank_bands": "1-1 500", "budget_points": "1000"})
    browser.choose("metric", "steps")
    browser.set_time("starts_at", now - timedelta(hours=1))
    browser.set_time("ends_at", now + timedelta(hours=1))
    browser.submit()
    browser.submit("form[action$='/publish']")
    expect("Published" in browser.text(".flash"), "published")
    challenge_path = browser.path().split("?")[0]
    manager_token = CREDENTIALS["tokens"]["backend_manager"]
    listed = api("GET", "/v1/customers?status=active&limit=1", manager_token)["items"][0]
    customer, shown = listed["id"], listed["display_name"]
    api("POST", "/v1/activity", CREDENTIALS["tokens"]["app_service"], {"events": [{
        "event_id": "browser-" + uuid.uuid4().hex, "customer_id": customer, "metric": "steps", "value": 12000,
        "occurred_at": (now - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")}]})
    try:
        WebDriverWait(browser.driver, 15).until(lambda driver: shown in browser.text("#leaderboard tbody"))
    except Exception:
        pass
    expect(shown in browser.text("#leaderboard tbody"), "the live board shows the activity without a reload, by name")
    expect(browser.driver.find_element(By.CSS_SELECTOR, "#leaderboard tbody a").get_attribute("href").endswith(customer),
           "the name links to the account")
    expect(browser.text("#board-status").startswith("Live: updated"), "and says it is live")
    browser.screenshot("challenge")
    owner_sql(f"UPDATE challenges SET ends_at = now() - interval '1 second' WHERE name = '{name}'")  # as time would
    browser.open(challenge_path)
    browser.driver.find_element(By.XPATH, "//button[normalize-space()='Preview the settlement']").click()
    browser.check_accessibility()
    expect(shown in browser.text("#payouts"), "the dry run lists the payout, by name")
    browser.driver.find_element(By.ID, "confirm_settle").click()
    browser.submit("form.danger")
    expect("Settled: paid 500 FP" in browser.text(".flash"), f"settled (saw {browser.text('main')[:200]!r})")


def manager_refunds_part_of_an_invoice(browser):
    """A backend manager opens Billing (past due first, and the declined renewal charges), follows a
    past-due customer to their subscription, reads the invoices, and refunds part of the paid one:
    refused until the box is ticked, then refunded and shown on the invoice."""
    browser.open("/console/billing")
    expect("Past due" in browser.text("main h2"), "past due first")
    rows = browser.driver.find_elements(By.CSS_SELECTOR, "#subscriptions tbody tr")
    expect(rows and all("past_due" in row.text for row in rows), "only past-due subscriptions")
    expect("card_declined" in browser.text("#declined"), "the declined renewal charges and why")
    browser.screenshot("billing")
    browser.driver.find_element(By.CSS_SELECTOR, "#subscriptions tbody a").click()
    browser.wait_for_path("/console/accounts/")
    browser.check_accessibility()
    invoices = browser.text("#invoices")
    expect("paid" in invoices and "open" in invoices and "card_declined" in invoices,
           f"a paid period and the declined renewal (saw {invoices[:200]!r})")
    browser.fill({"amount": "2.50", "refund-reason": "Goodwill for the trouble with the card"})
    browser.submit("#refund-form")
    expect(browser.field("confirm_refund").get_attribute("aria-invalid") == "true", "refused until confirmed")
    expect(browser.field("amount").get_attribute("value") == "2.50", "the amount kept")
    browser.driver.find_element(By.ID, "confirm_refund").click()
    browser.submit("#refund-form")
    expect("$2.50 refunded" in browser.text(".flash"), f"refunded (saw {browser.text('main')[:200]!r})")
    expect("$2.50" in browser.text("#invoices"), "the refund shown on its invoice")
    browser.screenshot("subscription")


def other_pages_are_accessible(admin, manager):
    """The pages no scenario above walks through open, fit 360 px, and pass axe-core."""
    for browser, paths in [
        (admin, ["/console/home", "/console/people", "/console/tokens", "/console/goods/import", "/console/security"]),
        (manager, ["/console/earning-rules", "/console/policies", "/console/badges", "/console/shop-applications",
                   "/console/messages/new", "/console/challenges/new", "/console/appeals", "/console/recommendations",
                   "/console/recommendations/new"]),
    ]:
        for path in paths:
            browser.open(path)
            expect(browser.driver.find_elements(By.CSS_SELECTOR, "header nav"), f"{path} opens in the layout (at {browser.path()})")
            browser.fits_narrow()
    manager.open("/console/accounts?status=active")
    manager.driver.find_element(By.CSS_SELECTOR, "table tbody a").click()
    manager.driver.find_element(By.LINK_TEXT, "FitPoints balance and ledger").click()
    manager.check_accessibility()
    expect("Balance" in manager.text("#balance"), "a customer's FitPoints")
    manager.open("/console/recommendations")
    manager.driver.find_element(By.CSS_SELECTOR, "table tbody a").click()
    manager.check_accessibility()
    expect("active customers" in manager.text("#reach-count"), "a recommendation's page counts its reach")
    manager.screenshot("recommendation")
    manager.open("/console/earning-rules")
    manager.screenshot("earning-rules")


def each_role_sees_its_home(shop, manager, auditor, platform):
    """Each role's home opens on its charts (a data table under each), fits 360 px and passes axe-core; a click on a
    day's bar in the shop's sales opens the orders placed that day."""
    shop.open("/console/home")
    for chart in ["net-sales", "gross-refunds", "order-states"]:
        expect(shop.driver.find_elements(By.CSS_SELECTOR, f"#{chart} svg"), f"the shop's home draws {chart}")
        expect(shop.driver.find_elements(By.CSS_SELECTOR, f"#{chart} details table"), f"{chart} has its data table")
    expect("Net sales" in shop.text("#sales-totals"), "the totals with their change")
    expect(shop.driver.find_elements(By.CSS_SELECTOR, "#best-sellers svg.sparkline"), "best sellers with sparklines")
    shop.screenshot("home")
    bars = [bar for bar in shop.driver.find_elements(By.CSS_SELECTOR, "#gross-refunds rect.bar.series-1")
            if int(bar.get_attribute("data-value")) > 0]
    expect(bars, "the shop sold on some day of the last 30")
    day = bars[-1].get_attribute("data-category")
    bars[-1].find_element(By.XPATH, "..").click()
    shop.wait_for_path("/console/orders?day=")
    shop.check_accessibility()
    expect(shop.path().startswith("/console/orders?day="), f"the bar opened that day's orders (at {shop.path()})")
    expect(day in shop.text("main h2") and shop.driver.find_elements(By.CSS_SELECTOR, "table tbody tr"),
           f"the orders placed {day} (saw {shop.text('main')[:200]!r})")
    manager.open("/console/home")
    for chart in ["customers", "locks-appeals", "fitpoints-flows", "issuance-balance"]:
        expect(manager.driver.find_elements(By.CSS_SELECTOR, f"#{chart} svg"), f"the manager's home draws {chart}")
    expect("Active customers" in manager.text("#manager-totals"), "the manager's totals")
    for chart in ["mrr", "subscribers", "failed-renewals"]:
        expect(manager.driver.find_elements(By.CSS_SELECTOR, f"#{chart} svg"), f"the manager's home draws {chart}")
    expect("Monthly recurring revenue" in manager.text("#subscription-totals"), "the subscription business's totals")
    manager.screenshot("home-manager")
    auditor.open("/console/home")
    expect(auditor.driver.find_elements(By.CSS_SELECTOR, "#audit-events svg"), "the auditor's events by day and family")
    expect("Last verification" in auditor.text("#audit-state"), "the last verification's state")
    auditor.screenshot("home-auditor")
    platform.open("/console/home?period=90")
    expect(platform.driver.find_elements(By.CSS_SELECTOR, "#shops-sales svg"), "the shops side by side")
    expect("partner_admin" in platform.text("#roles"), "operators and tokens by role")
    platform.screenshot("home-platform")


def expert_and_manager_publish_an_article(expert, manager):
    """An expert writes an article, watches the server's preview follow the typing (a script in the
    text stays inert), saves and submits it; the manager finds it in the review queue and sends it
    back with a comment; the expert reads the comment, fixes the text and submits again; the
    manager sees the change as a diff and publishes it; the app's list has it."""
    email = "nutrition@healthtrack.example"
    expert.open("/console/articles")
    expert.sign_in(email, PASSWORDS[email])
    expect(expert.heading() == "My articles", f"the expert's desk (at {expert.path()}: {expert.heading()!r})")
    expect("Sent back:" in expert.text(), "the demo's draft sent back shows the reviewer's comment")
    expert.screenshot("articles-desk")
    expert.driver.find_element(By.LINK_TEXT, "New article").click()
    expert.check_accessibility()
    title = "Sleep and appetite " + uuid.uuid4().hex[:4]
    expert.fill({"title": title, "summary": "How a short night makes you hungrier.", "tags": "sleep, appetite"})
    expert.choose("category", "sleep")
    expert.fill({"body": "## Why\n\nShort sleep raises **ghrelin**.\n\n<script>alert(1)</script><img src=x onerror=alert(2)>"})
    try:
        WebDriverWait(expert.driver, 5).until(lambda driver: "Why" in expert.text("#preview"))
    except Exception:
        pass
    preview = expert.driver.find_element(By.ID, "preview").get_attribute("innerHTML")
    expect("<h2>Why</h2>" in preview and "<strong>ghrelin</strong>" in preview, f"the preview follows the typing ({preview[:200]!r})")
    expect("<script" not in preview and "onerror" not in preview, "the preview is inert")
    expect("5 words" in expert.text("#preview-stats"), f"words and reading time ({expert.text('#preview-stats')!r})")
    expect(expert.no_alert(), "no script ran from the text")
    expert.screenshot("article-editor")
    expert.driver.find_element(By.CSS_SELECTOR, "button[value=save]").click()
    expert.check_accessibility()
    expect("Saved as a draft" in expert.text(".flash"), "saved as a draft")
    article = expert.path()
    expert.submit("form[action$='/submit']")
    expect("Submitted for review" in expert.text(".flash"), "submitted")

    manager.open("/console/articles")
    expect(title in manager.text("#review-queue"), "the manager's queue lists it")
    manager.screenshot("articles-queue")
    manager.driver.find_element(By.LINK_TEXT, title).click()
    manager.check_accessibility()
    manager.fill({"comment_send_back": "Add a source for the ghrelin figure."})
    manager.submit("form[action$='/send-back']")
    expect("Sent back" in manager.text(".flash"), "sent back")

    expert.open(article)
    expect("Add a source" in expert.text("#review-comment"), "the expert reads the comment")
    expert.driver.find_element(By.CSS_SELECTOR, "main a.button[href$='/edit']").click()
    expert.check_accessibility()
    expert.field("body").send_keys(Keys.CONTROL, Keys.END)
    expert.field("body").send_keys("\n\nSource: a 2004 study of 1,024 adults.")
    expert.driver.find_element(By.CSS_SELECTOR, "button[value=save]").click()
    expert.check_accessibility()
    expert.submit("form[action$='/submit']")

    manager.open(article)
    expect("+ Source: a 2004 study of 1,024 adults." in manager.text("#diff"), f"the change as a diff ({manager.text('#diff')[-200:]!r})")
    manager.screenshot("article-review")
    manager.submit("form[action$='/approve']")
    expect("Approved" in manager.text(".flash"), "approved")
    published = api("GET", "/v1/articles/published", CREDENTIALS["tokens"]["app_service"])
    expect(any(item["title"] == title for item in published["items"]), "the app's list shows the article")


def gtin13(number):
    """A valid GTIN-13 made from `number` (twelve digits, then the check digit)."""
    body = f"{number:012d}"[-12:]
    total = sum(int(digit) * (3 if index % 2 else 1) for index, digit in enumerate(body))
    return body + str((10 - total % 10) % 10)


def expert_and_manager_build_the_catalogs(expert, manager):
    """An expert (signed in) adds a food (a wrong check digit refused next to the barcode), checks an
    import file (the bad line by number) and imports it; writes a recipe from foods named by name and
    by barcode (an ambiguous name refused in its row), whose calories the page computes; adds a video
    with its MET (the typical calories shown) and submits each. The manager reviews the queue, approves
    the food, the recipe and the video, and approves the import; the app reads the food by its barcode.
    The desk and the editors fit 360 px."""
    tag = uuid.uuid4().int % 10**8
    for browser, email in ((expert, "nutrition@healthtrack.example"), (manager, "manager@healthtrack.example")):
        browser.open("/console/foods")
        if browser.path().startswith("/console/sign-in"):
            browser.sign_in(email, PASSWORDS[email])
    expect(expert.heading() == "My foods", f"the expert's food desk ({expert.heading()!r})")
    expert.driver.find_element(By.LINK_TEXT, "New food").click()
    expert.check_accessibility()
    good = gtin13(290000000000 + tag)
    wrong = good[:-1] + str((int(good[-1]) + 1) % 10)
    expert.fill({"gtin": wrong, "name": f"Spelt crackers {tag}", "brand": "Northfield", "serving_grams": "30",
                 "energy_kcal_100g": "402", "fat_100g": "9", "carbohydrates_100g": "66", "proteins_100g": "12"})
    expert.driver.find_element(By.ID, "allergens_gluten").click()
    expert.screenshot("food-editor")
    expert.submit()
    expect(expert.field("gtin").get_attribute("aria-invalid") == "true", "a wrong check digit is refused next to the barcode")
    expect(expert.field("name").get_attribute("value") == f"Spelt crackers {tag}", "the other values are kept")
    expert.fill({"gtin": good})
    expert.submit()
    expect("Saved as a draft" in expert.text(".flash"), f"the food is saved ({expert.text('main')[:200]!r})")
    expect("gluten" in expert.text("#facts") and "402 kcal" in expert.text("#facts"), "its page shows the figures")
    food = expert.path()
    expert.submit("form[action$='/submit']")
    expect("Submitted" in expert.text(".flash"), "the food is submitted")

    header = "code,product_name,brands,energy-kcal_100g,proteins_100g"
    lines = [f"{gtin13(291000000000 + tag)},Rye bread {tag},Northfield,259,8.5",
             f"{gtin13(292000000000 + tag)},Kefir {tag},Blue Coast,lots,3.3",
             f"{gtin13(293000000000 + tag)},Oat drink {tag},Blue Coast,46,1"]
    path = os.path.join(tempfile.mkdtemp(), "foods.csv")
    with open(path, "w") as file:
        file.write("\n".join([header] + lines) + "\n")
    expert.open("/console/foods/import")
    expert.field("file").send_keys(path)
    expert.submit("main form.stack")
    expect("1 refused" in expert.text("#import-summary"), f"the check counts the bad line ({expert.text('main')[:200]!r})")
    expect("3" in expert.text("#import-issues") and "energy" in expert.text("#import-issues"), "the bad line by number and field")
    expert.screenshot("foods-import-check")
    expert.field("file").send_keys(path)
    expert.driver.find_element(By.CSS_SELECTOR, "button[value=import]").click()
    expert.wait_for_path("/console/food-imports/")
    expert.check_accessibility()
    facts = expert.text("#import-facts")
    expect("Foods\n2" in facts and "Waiting for review\n2" in facts, f"imported, the bad line skipped ({facts!r})")
    expect("someone else approves it" in expert.text(), "the importer is told another person approves it")
    imported = expert.path()

    oats = api("GET", "/v1/foods/search?q=rolled%20oats&limit=1", CREDENTIALS["tokens"]["app_service"])["items"][0]
    expert.open("/console/recipes/new")
    expert.fill({"title": f"Overnight oats {tag}", "summary": "Soaked oats with yoghurt.", "servings": "2",
                 "tags": "vegetarian, breakfast", "ingredient_0_food": "Rolled oats", "ingredient_0_quantity": "80",
                 "ingredient_1_food": "Banana", "ingredient_1_quantity": "1", "body": "1. Mix.\n2. Chill overnight."})
    expert.choose("ingredient_1_unit", "serving")
    expert.screenshot("recipe-editor")
    expert.submit()
    expect(expert.field("ingredient_0_food").get_attribute("aria-invalid") == "true",
           f"an ambiguous food name is refused in its row ({expert.text('main')[:200]!r})")
    expert.fill({"ingredient_0_food": oats["gtin"]})
    expert.submit()
    expect("Saved as a draft" in expert.text(".flash"), f"the recipe is saved ({expert.text('main')[:300]!r})")
    expected = round((80 * oats["energy_kcal_100g"] / 100 + 120 * 89 / 100) / 2)
    facts = expert.text("#facts")
    expect(f"{expected} kcal" in facts or f"{expected - 1} kcal" in facts or f"{expected + 1} kcal" in facts,
           f"a serving's calories computed from the foods, about {expected} ({facts!r})")
    recipe = expert.path()
    expert.submit("form[action$='/submit']")

    expert.open("/console/videos/new")
    expert.fill({"title": f"Morning flow {tag}", "description": "Twenty minutes of gentle yoga.",
                 "trainer_name": "Maya Lin", "duration_seconds": "1200", "equipment": "mat",
                 "video_url": "https://cdn.healthtrack.example/v/flow.m3u8", "met": "2.5"})
    expert.choose("category", "yoga")
    expert.submit()
    expect("Saved as a draft" in expert.text(".flash"), f"the video is saved ({expert.text('main')[:300]!r})")
    expect("about 60 kcal" in expert.text("#facts"), f"the typical calories: 2.5 MET x 70 kg x 1/3 h ({expert.text('#facts')!r})")
    expert.screenshot("video")
    video = expert.path()
    expert.submit("form[action$='/submit']")
    expert.open("/console/recipes")
    expect(f"Overnight oats {tag}" in expert.text(), "the expert's desk lists the recipe in review")
    expert.screenshot("recipes-desk")

    manager.open("/console/foods")
    expect(f"Spelt crackers {tag}" in manager.text("#review-queue"), "the manager's queue lists the food")
    manager.screenshot("foods-queue")
    for path in (food, recipe, video):
        manager.open(path)
        manager.submit("form[action$='/approve']")
        expect("Approved" in manager.text(".flash"), f"{path} approved ({manager.text('main')[:200]!r})")
    manager.open(imported)
    manager.submit("form[action$='/approve']")
    expect("2 foods are live" in manager.text(".flash"), f"the import approved ({manager.text('main')[:200]!r})")
    read = api("GET", f"/v1/foods/by-barcode/{good}", CREDENTIALS["tokens"]["app_service"])
    expect(read["name"] == f"Spelt crackers {tag}", f"the app reads the food by its barcode ({read})")


def expert_makes_a_meal_plan(expert):
    """An expert (signed in) takes the next meal-plan request from the queue, reads the customer's
    profile for the plan (the calorie goal and the flags; the read recorded with the purpose plan),
    composes a week from recipes, saves it (each day's calories summed, days off the goal warned) and
    sends it; the app's read has the plan. The editor is readable at 360 px."""
    expert.open("/console/plans")
    expect(expert.heading() == "Plans", f"the plans page ({expert.heading()!r})")
    expect(expert.driver.find_elements(By.CSS_SELECTOR, "#queue-table-meal tbody tr"), "a meal-plan request waits")
    expert.screenshot("plans-queue")
    expert.submit("form[action$='/next-meal']")
    expect("You hold this request" in expert.text(".flash"), "the request is held")
    request_path = expert.path()
    expect("kcal" in expert.text("#plan-profile"), "the profile read for the plan shows the calorie goal")
    customer = api("GET", "/v1/plan-requests/" + request_path.rsplit("/", 1)[1],
                   CREDENTIALS["tokens"]["backend_manager"])["customer_id"]
    accesses = api("GET", f"/v1/customers/{customer}/health-profile/accesses", CREDENTIALS["tokens"]["backend_manager"])
    expect(accesses["items"] and accesses["items"][0]["purpose"] == "plan" and accesses["items"][0]["actor_role"] == "expert",
           f"the read is recorded with the purpose plan ({accesses['items'][:1]})")
    for day in range(1, 8):
        for index, meal in enumerate(["breakfast", "lunch", "dinner"]):
            Select(expert.field(f"d{day}_{meal}")).select_by_index(1 + (day + index * 5) % 20)
    expert.fill({"note": "Dinners that take 20 minutes. Drink water with each meal."})
    expert.screenshot("plan-editor")
    expert.submit("form.plan-editor")
    expect("Saved" in expert.text(".flash"), f"the plan is saved ({expert.text('main')[:300]!r})")
    expect("Day 7:" in expert.text("main") and "kcal" in expert.text("main"), "each day with its calories")
    expert.screenshot("plan")
    expert.submit("form[action$='/send']")
    expect("Sent" in expert.text(".flash"), "sent")
    plans = api("GET", f"/v1/customers/{customer}/plans", CREDENTIALS["tokens"]["app_service"])
    expect(plans["items"] and len(plans["items"][0]["days"]) == 7, f"the app's read has the week ({str(plans)[:200]})")


def partner_admin_sets_up_a_second_factor(browser):
    """A partner admin turns on the second factor from the Security page by scanning its QR code
    (read by zbarimg from the page as rendered), sees ten recovery codes once, and signs in again
    with a code."""
    email = "admin@peak-protein.example"
    browser.open("/console/sign-in")
    browser.sign_in(email, PASSWORDS[email])
    browser.open("/console/security")
    browser.driver.find_element(By.LINK_TEXT, "Set up a second factor").click()
    browser.check_accessibility()
    browser.screenshot("second-factor")
    with tempfile.NamedTemporaryFile(suffix=".png") as image:
        image.write(browser.driver.find_element(By.CSS_SELECTOR, "img.qr").screenshot_as_png)
        image.flush()
        scanned = subprocess.run(["zbarimg", "--raw", "-q", image.name], capture_output=True, text=True).stdout.strip()
    written = browser.field("totp-uri").get_attribute("textContent").strip()
    expect(scanned.startswith("otpauth://totp/") and scanned == written, f"the QR code reads as the otpauth link (read {scanned!r})")
    secret = scanned.split("secret=")[1].split("&")[0] if "secret=" in scanned else browser.text("#totp-secret")
    browser.fill({"code": "000000"})
    browser.submit()
    expect(browser.field("code").get_attribute("aria-invalid") == "true", "a wrong code is refused next to the field")
    browser.fill({"code": totp(secret)})
    browser.submit()
    codes = [item.text for item in browser.driver.find_elements(By.CSS_SELECTOR, "#recovery-codes code")]
    expect(len(set(codes)) == 10, f"ten recovery codes (saw {len(codes)})")
    browser.screenshot("recovery-codes")
    browser.driver.find_element(By.CSS_SELECTOR, "form.signout button").click()
    browser.wait_for_path("/console/sign-in")
    browser.fill({"email": email, "password": PASSWORDS[email]})
    browser.submit()
    expect(browser.path().startswith("/console/sign-in/code"), "the next sign-in asks for a code")
    browser.fill({"code": totp(secret, time.time() + 30)})  # the enrolment spent this step's code
    browser.submit()
    expect(browser.path() == "/console/home", f"signed in with the code (at {browser.path()})")
    browser.open("/console/security")
    expect("Recovery codes left: 10" in browser.text(), "the Security page says the second factor is on")


def sign_out(browser):
    browser.open("/console/home")
    browser.driver.find_element(By.CSS_SELECTOR, "form.signout button").click()
    browser.wait_for_path("/console/sign-in")
    expect(browser.path().startswith("/console/sign-in"), f"signed out: at sign-in (at {browser.path()}: {browser.heading()!r})")
    browser.open("/console/goods")
    expect(browser.path().startswith("/console/sign-in"), "the session no longer opens pages")


def main():
    admin, staff, stranger, manager, auditor, platform, newcomer, expert, moderator, deputy = (Browser() for _ in range(10))
    browsers = [admin, staff, stranger, manager, auditor, platform, newcomer, expert, moderator, deputy]
    try:
        scenarios = [
            ("a partner admin creates a good named <img …> and fixes a refused form", lambda: partner_admin_creates_a_good(admin)),
            ("a partner admin imports a CSV: sees the bad line, fixes it, applies it; archives both goods in bulk",
             lambda: partner_admin_imports_goods(admin)),
            ("a partner admin accepts and ships an order and reads its trail", lambda: partner_admin_ships_an_order(admin)),
            ("a partner admin filters the board by a good and a total, saves it as a view, then clears the filter",
             lambda: partner_admin_filters_the_board(admin)),
            ("a partner admin registers a webhook endpoint, reads a delivery's attempt and replays it",
             lambda: partner_admin_replays_a_webhook(admin)),
            ("a partner admin refunds one line of a shipped order as a return", lambda: partner_admin_refunds_one_line(admin)),
            ("a partner admin ships 20 orders in one go, checked first", lambda: partner_admin_ships_twenty_at_once(admin)),
            ("a partner admin issues a token that may only read orders, from this machine only",
             lambda: partner_admin_issues_a_narrow_token(admin)),
            ("a form without its CSRF token is refused", lambda: forged_form_is_refused(admin)),
            ("the keyboard reaches the content; focus is visible", lambda: keyboard_only(admin)),
            ("another tenant's order and good are 404 pages; the staff page is 403", lambda: staff_meets_another_tenant(staff, [order_path(admin), good_path(admin)])),
            ("a partner's staff chooses its mail, then a mailed link stops one kind without signing in",
             lambda: staff_chooses_mail_and_unsubscribes(staff, stranger)),
            ("an expired session signs in again and comes back", lambda: expired_session_comes_back(admin)),
            ("a manager locks and unlocks an account with a reason", lambda: manager_locks_and_unlocks(manager)),
            ("a manager requests a large FitPoints correction; a second manager approves it",
             lambda: managers_approve_a_large_correction(manager, deputy)),
            ("a manager sends two accounts a notice in the app with one reason, checked first",
             lambda: manager_messages_two_accounts(manager)),
            ("a manager reads a health profile: asked why once, the weight chart, the read listed",
             lambda: manager_reads_a_health_profile(manager)),
            ("a manager publishes a maintenance notice: 2 h ahead refused in place, 25 h ahead published",
             lambda: manager_publishes_a_maintenance_notice(manager)),
            ("a manager runs a challenge: live board, preview, settle", lambda: manager_runs_a_challenge(manager)),
            ("a manager finds a past-due customer, reads the invoices, refunds part of one",
             lambda: manager_refunds_part_of_an_invoice(manager)),
            ("an expert writes and submits; the manager sends back; the expert fixes; the manager publishes",
             lambda: expert_and_manager_publish_an_article(expert, manager)),
            ("an expert adds a food, imports foods, writes a recipe and a video; the manager approves them",
             lambda: expert_and_manager_build_the_catalogs(expert, manager)),
            ("an expert takes a meal-plan request, reads the profile (recorded), composes a week from recipes, sends it",
             lambda: expert_makes_a_meal_plan(expert)),
            ("a moderator takes the next case, removes the comment and locks its author with a ground; the statement of reasons",
             lambda: moderator_decides_a_case(moderator)),
            ("an auditor filters the log and verifies the chain", lambda: auditor_filters_and_verifies(auditor)),
            ("every other page opens and passes axe-core", lambda: other_pages_are_accessible(admin, manager)),
            ("a platform admin invites a person, who sets a password from the link", lambda: platform_admin_invites_a_person(platform, newcomer)),
            ("each role's home: charts with their data, a day's bar opens that day's orders",
             lambda: each_role_sees_its_home(admin, manager, auditor, platform)),
            ("an auditor reads times in their own zone (Europe/Berlin), UTC on hover",
             lambda: auditor_reads_times_in_their_zone(auditor)),
            ("lockout after the policy's failures", lambda: lockout(stranger)),
            ("a partner admin sets up a second factor by its QR code and signs in with a code",
             lambda: partner_admin_sets_up_a_second_factor(stranger)),
            ("sign out", lambda: sign_out(admin)),
        ]
        only = os.environ.get("ONLY")  # a part of a scenario's name: run those alone (while working on one)
        for name, run in [scenario for scenario in scenarios if not only or only in scenario[0]]:
            print(f"  {name}", file=sys.stderr)
            try:
                run()
            except Exception:
                failures.append(f"{name}: {traceback.format_exc()}")
                print(traceback.format_exc(), file=sys.stderr)
    finally:
        for browser in browsers:
            failures.extend(browser.accessibility_failures)
            browser.quit()
    if failures:
        print(f"\n{len(failures)} failure(s):", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
        sys.exit(1)
    print("browser tests: every scenario passed; axe-core found no serious or critical violation", file=sys.stderr)


def order_path(browser):
    """The path of an order in the signed-in partner's board (its "Shipped" tab)."""
    browser.open("/console/orders?status=shipped")
    return browser.driver.find_element(By.CSS_SELECTOR, "table tbody a").get_attribute("href")[len(URL):]


def good_path(browser):
    """The path of the first good in the signed-in partner's list."""
    browser.open("/console/goods")
    return browser.driver.find_element(By.CSS_SELECTOR, "table tbody a").get_attribute("href")[len(URL):]


if __name__ == "__main__":
    main()
