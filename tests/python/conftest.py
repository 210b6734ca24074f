"""Shared fixtures: every test starts with a fresh default graph."""

import pathlib

import pytest

import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def fixtures():
    return FIXTURES
