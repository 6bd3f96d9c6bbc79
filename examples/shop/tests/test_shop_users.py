"""Sign-up: the welcome mail goes out from the thread pool."""

from __future__ import annotations


def test_signup_creates_the_user_and_sends_the_welcome_mail(client, outbox, wait_until):
    response = client.post("/users", json={"email": "bo@example.com", "name": "Bo"})

    assert response.status_code == 201
    assert response.json()["email"] == "bo@example.com"
    [mail] = wait_until(lambda: list(outbox), message="the welcome mail")
    assert mail["To"] == "bo@example.com"
    assert mail["Subject"] == "Welcome to the shop"
    assert "Hello Bo" in mail.get_content()


def test_signup_is_announced_on_the_event_feed(client, user, wait_until):
    expected = f"user_signed_up:{user['id']}"
    wait_until(lambda: expected in client.get("/admin/events").json(), message="the event")


def test_a_second_signup_with_the_same_email_is_refused_and_sends_nothing(client, user, outbox):
    response = client.post("/users", json={"email": "ana@example.com", "name": "Ana again"})

    assert response.status_code == 409
    assert len(outbox) == 1


def test_an_invalid_email_is_rejected(client):
    assert client.post("/users", json={"email": "nope", "name": "X"}).status_code == 422
