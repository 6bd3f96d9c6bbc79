"""Payment, messaging, mail, rendering and storage SDKs: what each call does, from the catalogue.

One example per SDK family, written from each SDK's documented API, and look-alikes
that must not match (an LLM client's ``messages.create`` is no SMS; a Stripe read moves
no money).
"""

from __future__ import annotations

from inventory.rule_examples._base import K, RuleExample, V, example

EXAMPLES: list[RuleExample] = [
    example(
        "idempotent: a request by method name has that method's semantics",
        """
        import requests

        def mirror(url, body):
            requests.request("PUT", url, data=body)
            requests.request(method="DELETE", url=url + "/draft")

        def purge(url):
            requests.request("PURGE", url)
        """,
        "mirror",
        V.IDEMPOTENT,
        {K.HTTP_PUT, K.HTTP_DELETE},
        "`requests.request(method, url)` (a Session's, httpx's, aiohttp's and urllib3's "
        "too) does what its method does (RFC 9110): `GET`, `HEAD` and `OPTIONS` read, `PUT` "
        "and `DELETE` are idempotent by the protocol, `PATCH` is not. Any other method "
        "(`PURGE`), or one only known at run time, is read as a `POST`: a retry posts again.",
    ),
    example(
        "non_idempotent: a Socket.IO emit to connected clients",
        """
        from flask_socketio import SocketIO, emit

        socketio = SocketIO()

        def announce(room, payload):
            socketio.emit("order-updated", payload, to=room)

        def reply(payload):
            emit("pong", payload)
        """,
        "announce",
        V.NON_IDEMPOTENT,
        {K.SOCKET_EMIT},
        "`SocketIO.emit` / `flask_socketio.emit` (and python-socketio's `Server.emit`) send a "
        "message to every connected client of the room: a repeat sends it again. It is fast "
        "(`socket_emit` is not slow work), so a view that only emits is no site.",
    ),
    example(
        "idempotent, and never moved: a hook on the request being served",
        """
        from flask import after_this_request, flash, session

        def sign_in(user):
            @after_this_request
            def rotate(response):
                session.regenerate()
                return response

            flash(f"Welcome back, {user}")
        """,
        "sign_in",
        V.IDEMPOTENT,
        {K.REQUEST_HOOK},
        "Flask's (and Quart's) `after_this_request` runs a function after the response of the "
        "request being served, and `flash` stores a message in its session: `request_hook`. "
        "`@after_this_request` on a def inside the job is that call, made when the def runs. "
        "Neither repeats anything, but only the process serving the request can do it: "
        "`migrator apply` never moves such a job (a worker serves no request).",
    ),
    example(
        "idempotent, and never moved: the session of the request being served",
        """
        from flask import session

        def remember_login(mechanism):
            session["login_mechanism"] = mechanism
            session.pop("credentials_seen", None)
            session.permanent = True
        """,
        "remember_login",
        V.IDEMPOTENT,
        {K.REQUEST_HOOK},
        "Flask's (and Quart's) `session` is the current request's (\"works pretty much like an "
        "ordinary dict\"; its changes go into that response's cookie): an item set or deleted, "
        "`pop`, `clear`, `update`, `setdefault`, an attribute set (`permanent`, `modified`) "
        "change it, `request_hook`. Run by a worker, which serves no request, the change would "
        "be lost, so `migrator apply` keeps the job in-process.",
    ),
    example(
        "idempotent, and never moved: a read of the request being served",
        """
        import requests
        from flask import g, request
        from flask_login import current_user

        def get_db():
            if "db" not in g:
                g.db = object()
            return g.db

        def audit(action):
            get_db()
            requests.put(
                "https://audit.example.com/log",
                json={"path": request.path, "user": current_user.id, "who": g.user_id},
                timeout=5,
            )
        """,
        "audit",
        V.IDEMPOTENT,
        {K.HTTP_PUT, K.REQUEST_READ},
        "Flask's `request` and `session` (Quart's, and its `websocket`), Flask-Login's "
        "`current_user` and django-crum's `get_current_request()` / `get_current_user()` are "
        "the request being served, and so is an attribute of Flask's `g` the function does not "
        "set itself (`g.user_id`, filled by a `before_request` hook; `g.db`, set when missing, "
        "is `get_db()`'s own memo): each read is a `request_read`, through any function the job "
        "calls. Reading repeats nothing, so the verdict is the PUT's, but a worker serves no "
        'request: there the read fails ("Working outside of request context") or reads a '
        "blank request, so `migrator apply` leaves the job and says to pass the value as an "
        "argument.",
    ),
    example(
        "unsafe: a Stripe subscription started at module level, without a key",
        """
        import stripe

        def subscribe(customer_id, price_id):
            stripe.Subscription.create(customer=customer_id, items=[{"price": price_id}])
        """,
        "subscribe",
        V.UNSAFE,
        {K.PAYMENT},
        "Starting a subscription bills the customer: `stripe.Subscription.create` is a payment, "
        "keyed only by `idempotency_key=`.",
        evidence_mentions="stripe.Subscription.create without idempotency_key",
    ),
    example(
        "needs_key: StripeClient with the key in `options`",
        """
        from stripe import StripeClient

        def charge(order_id, amount):
            client = StripeClient("sk_test")
            client.payment_intents.create(
                params={"amount": amount, "currency": "eur"},
                options={"idempotency_key": f"order-{order_id}"},
            )
        """,
        "charge",
        V.NEEDS_KEY,
        {K.PAYMENT},
        "The newer client shape (`client.payment_intents.create`, also `client.v1.`) carries the "
        "key in `options`; derived from the order, a retry is recognised by Stripe.",
    ),
    example(
        "idempotent: a Stripe read is no payment",
        """
        import stripe

        def refresh_status(intent_id):
            return stripe.PaymentIntent.retrieve(intent_id).status
        """,
        "refresh_status",
        V.IDEMPOTENT,
        {K.HTTP_GET},
        "`retrieve` and `list` are GETs: a look-alike of the payment calls that moves nothing.",
    ),
    example(
        "unsafe: PayPal, Braintree and Mollie calls without a key",
        """
        import braintree
        import paypalrestsdk
        from mollie.api.client import Client

        def pay(order_id, amount, nonce):
            paypalrestsdk.Payment({"intent": "sale"}).create()
            gateway = braintree.BraintreeGateway(braintree.Configuration("sandbox"))
            gateway.transaction.sale({"amount": amount, "payment_method_nonce": nonce})
            mollie = Client()
            mollie.payments.create({"amount": {"currency": "EUR", "value": amount}})
        """,
        "pay",
        V.UNSAFE,
        {K.PAYMENT},
        "`paypalrestsdk.Payment(...).create()`, Braintree's `transaction.sale` (module level or "
        "through a gateway) and Mollie's `payments.create` move money; Braintree and PayPal take "
        "no idempotency key, Mollie takes `idempotency_key=`.",
    ),
    example(
        "needs_key: Adyen with an idempotency key; unsafe: Square with a key minted per run",
        """
        import uuid
        import Adyen
        from square import Square

        def authorise(order_id, request):
            adyen = Adyen.Adyen()
            adyen.checkout.payments_api.payments(request, idempotency_key=f"auth-{order_id}")

        def take(order_id, amount):
            client = Square(token="t")
            client.payments.create(
                source_id="cnon", idempotency_key=str(uuid.uuid4()), amount_money=amount
            )
        """,
        "take",
        V.UNSAFE,
        {K.PAYMENT, K.RANDOM_ID},
        "Square requires an idempotency key, but one minted inside the job changes on every "
        "retry: the provider cannot recognise the repeat.",
        evidence_mentions="minted inside the job",
    ),
    example(
        "notifications: Twilio, Vonage and an SNS text are SMS",
        """
        import boto3
        from twilio.rest import Client
        from vonage import Auth, Vonage

        def alert(user_phone, text):
            Client("sid", "token").calls.create(to=user_phone, from_="+1", url="https://x")
            Vonage(Auth(api_key="k", api_secret="s")).sms.send(text)
            boto3.client("sns").publish(PhoneNumber=user_phone, Message=text)
        """,
        "alert",
        V.NON_IDEMPOTENT,
        {K.SMS_SEND},
        "A call, an SMS and an SNS publish to a phone number each reach a phone: a retry "
        "reaches it again (visible, so on the notification fast track).",
    ),
    example(
        "look-alike: an LLM client's `messages.create` is not an SMS",
        """
        import anthropic

        def summarise(text):
            client = anthropic.Anthropic()
            return client.messages.create(model="m", max_tokens=10, messages=[])
        """,
        "summarise",
        V.UNKNOWN,
        set(),
        "`client.messages.create` is Twilio's shape too; the receiver hint leaves Anthropic and "
        "OpenAI clients out, so the call stays an unexplained gap, not a text message.",
    ),
    example(
        "look-alike: `self.client.messages.create` without a `to` is not an SMS",
        """
        class Summariser:
            def __init__(self, client):
                self.client = client

            def summarise(self, text):
                return self.client.messages.create(
                    model="m", max_tokens=10, messages=[{"role": "user", "content": text}]
                )

        def summarise(client, text):
            Summariser(client).summarise(text)

        def notify(client, phone):
            client.messages.create(to=phone, from_="+15550000", body="Your order shipped")
        """,
        "summarise",
        V.UNKNOWN,
        set(),
        "An untyped `client` leaves only the call's shape: Twilio's `messages.create` sends to "
        "`to`, its one required parameter, and Anthropic's takes keywords only (`model=`, "
        "`messages=`), never `to`. So the summariser's call stays an unexplained gap, while "
        "`notify`'s `client.messages.create(to=phone, ...)` is a text message.",
    ),
    example(
        "notifications: mail through SES, Resend, SendGrid and Flask-Mailman",
        """
        import boto3
        import resend
        from flask_mailman import EmailMessage
        from sendgrid import SendGridAPIClient

        def welcome(address, raw):
            boto3.client("ses").send_raw_email(RawMessage={"Data": raw})
            resend.Emails.send({"to": address, "subject": "Hi"})
            SendGridAPIClient("key").send(raw)
            EmailMessage("Hi", "Welcome", to=[address]).send()
        """,
        "welcome",
        V.NON_IDEMPOTENT,
        {K.EMAIL_SEND},
        "Each provider's send is a mail; Flask-Mailman mirrors Django's `EmailMessage.send`.",
    ),
    example(
        "notifications: async mail (fastapi-mail, aiosmtplib)",
        """
        import aiosmtplib
        from fastapi_mail import FastMail

        async def notify(conf, message):
            await FastMail(conf).send_message(message)
            await aiosmtplib.send(message, hostname="smtp.example.com")
        """,
        "notify",
        V.NON_IDEMPOTENT,
        {K.EMAIL_SEND},
        "An awaited send is still a send: `FastMail.send_message` and `aiosmtplib.send`.",
    ),
    example(
        "notifications: push through Firebase, Web Push and APNs",
        """
        from apns2.client import APNsClient
        from firebase_admin import messaging
        from pywebpush import webpush

        def push(tokens, subscription, payload):
            messaging.send_each([messaging.Message(token=t) for t in tokens])
            webpush(subscription_info=subscription, data=payload)
            APNsClient("cert.pem").send_notification(tokens[0], payload)
        """,
        "push",
        V.NON_IDEMPOTENT,
        {K.PUSH_SEND},
        "Every `firebase_admin.messaging.send*`, `pywebpush.webpush` and APNs' "
        "`send_notification` reach a device.",
    ),
    example(
        "needs a key: a Slack webhook is an HTTP POST",
        """
        from slack_sdk.webhook import WebhookClient

        def announce(url, text):
            WebhookClient(url).send(text=text)
        """,
        "announce",
        V.NON_IDEMPOTENT,
        {K.HTTP_POST},
        "Slack's incoming webhook posts a message: a retry posts it again.",
    ),
    example(
        "idempotent: a PDF rendered and an object put to its key",
        """
        from weasyprint import HTML

        def invoice_pdf(invoice_id, html, s3):
            pdf = HTML(string=html).write_pdf()
            s3.put_object(Bucket="invoices", Key=f"{invoice_id}.pdf", Body=pdf)
        """,
        "invoice_pdf",
        V.IDEMPOTENT,
        {K.REPORT_GENERATE, K.OBJECT_PUT},
        "Rendering is slow work, not a repeat; `put_object` overwrites the same key, so a "
        "retry converges.",
    ),
    example(
        "idempotent or not by the Redis command sent: redis-py's methods, pipelines included",
        """
        import redis

        def forget(r: redis.Redis, task_id):
            r.execute_command("HDEL", "tasks", task_id)
            r.execute_command("SET", f"done:{task_id}", 1)

        def count(r: redis.Redis, task_id):
            r.execute_command("INCRBY", "finished", 1)
        """,
        "forget",
        V.IDEMPOTENT,
        {K.CACHE_DELETE, K.CACHE_SET},
        "Every command method of redis-py (`r.hdel`, `pipe.set`, the asyncio client's) ends "
        'in `self.execute_command("HDEL", ...)` on a mixin of `redis.commands`, which the '
        "scan reads from the installed library. The command is what the call does (redis.io's "
        "command reference): reads; writes that converge (`SET`, `HSET`, `SADD`, `ZADD`, "
        "`EXPIRE`); deletes; commands that grow, count or consume on repeat (`INCR*`, "
        "`*PUSH`, `XADD`, `*POP`: `count` is `non_idempotent`); `PUBLISH`. A command named "
        "by a variable leaves the job `unknown`.",
    ),
]
