#include "handle.h"

void handle_list_init(handle_list *l)
{
    pthread_mutex_init(&l->lock, NULL);
    l->head.prev = l->head.next = &l->head;
}

void handle_list_destroy(handle_list *l)
{
    pthread_mutex_destroy(&l->lock);
}

void handle_list_add(handle_list *l, sv_handle *h, handle_kind kind)
{
    h->kind = kind;
    pthread_mutex_lock(&l->lock);
    h->prev = &l->head;
    h->next = l->head.next;
    l->head.next->prev = h;
    l->head.next = h;
    pthread_mutex_unlock(&l->lock);
}

void handle_list_remove(handle_list *l, sv_handle *h)
{
    pthread_mutex_lock(&l->lock);
    h->prev->next = h->next;
    h->next->prev = h->prev;
    h->prev = h->next = NULL;
    pthread_mutex_unlock(&l->lock);
}

sv_handle *handle_list_pop(handle_list *l)
{
    pthread_mutex_lock(&l->lock);
    sv_handle *h = l->head.next;
    if (h == &l->head) {
        h = NULL;
    } else {
        h->prev->next = h->next;
        h->next->prev = h->prev;
        h->prev = h->next = NULL;
    }
    pthread_mutex_unlock(&l->lock);
    return h;
}
