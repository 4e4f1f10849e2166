"""Elicitation forms: a restricted JSON Schema read into fields, and a form's answer typed and checked."""

from __future__ import annotations

from webclient.acp.elicitation import form_fields
from webclient.viewmodel.questions import Question, form_values

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "maxLength": 5},
        "token": {"type": "string", "format": "password"},
        "count": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
        "ratio": {"type": "number"},
        "on": {"type": "boolean", "default": True},
        "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small"]},
        "odd": {"type": "array"},
        7: {"type": "string"},
        "bad": "not an object",
    },
    "required": ["name", "count", 3],
}


def test_every_kind_of_property_becomes_a_field() -> None:
    fields = {f.name: f for f in form_fields(SCHEMA)}
    assert list(fields) == ["name", "token", "count", "ratio", "on", "colour", "size", "odd"]
    assert (fields["name"].kind, fields["name"].required, fields["name"].max_length) == ("string", True, 5)
    assert fields["token"].secret and not fields["name"].secret
    assert (fields["count"].kind, fields["count"].default, fields["count"].minimum) == ("integer", 2, 1)
    assert fields["on"].kind == "boolean" and fields["on"].default is True
    assert [(c.value, c.label) for c in fields["colour"].choices] == [("r", "Red"), ("g", "Green")]
    assert [(c.value, c.label) for c in fields["size"].choices] == [("s", "Small"), ("m", "m")]
    assert fields["odd"].kind == "string"  # shown as text rather than dropped
    assert form_fields("not a schema") == [] and form_fields({"properties": []}) == []


def question() -> Question:
    return Question(seq=1, turn=1, request_id="e1", fields=form_fields(SCHEMA))


def test_a_form_answer_is_typed_and_checked() -> None:
    values, problem = form_values(question(), {"name": "calc", "count": "3", "ratio": "0.5", "on": "on", "size": "m"})
    assert problem is None
    assert values == {"name": "calc", "count": 3, "ratio": 0.5, "on": True, "size": "m"}
    assert form_values(question(), {"count": "2"}) == (None, "“Name” is required.")
    assert form_values(question(), {"name": "x", "count": "2.5"})[1] == "“count” must be a whole number."
    assert form_values(question(), {"name": "x", "count": "9"})[1] == "“count” is out of range."
    assert form_values(question(), {"name": "toolong", "count": "2"})[1] == "“Name” is longer than 5 characters."
    unknown_choice = {"name": "x", "count": "2", "colour": "blue"}
    assert form_values(question(), unknown_choice)[1] == "“colour”: choose one of the options."
    assert form_values(question(), {"name": "x", "count": "2"})[0] == {"name": "x", "count": 2, "on": False}
