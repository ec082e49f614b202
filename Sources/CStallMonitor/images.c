// The loaded-image list: path, address range, load bias and GNU build ID of every ELF object,
// from dl_iterate_phdr, so that reports can be symbolicated offline later.
#include "CStallMonitor.h"

#include <elf.h>
#include <limits.h>
#include <stddef.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    CStallMonitorImageList *list;
    int capacity;
    int failed;
} collect_context;

static void read_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) *header, CStallMonitorImage *image) {
    const char *cursor = (const char *)(info->dlpi_addr + header->p_vaddr);
    const char *end = cursor + header->p_memsz;
    while (cursor + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)cursor;
        const char *name = cursor + sizeof(ElfW(Nhdr));
        size_t name_size = (note->n_namesz + 3u) & ~3u;
        const char *desc = name + name_size;
        size_t desc_size = (note->n_descsz + 3u) & ~3u;
        if (desc + note->n_descsz > end) return;
        if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            size_t size = note->n_descsz < sizeof(image->build_id) ? note->n_descsz : sizeof(image->build_id);
            memcpy(image->build_id, desc, size);
            image->build_id_size = (int)size;
            return;
        }
        cursor = desc + desc_size;
    }
}

static int collect(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    collect_context *context = data;
    CStallMonitorImageList *list = context->list;
    if (list->count == context->capacity) {
        int capacity = context->capacity ? context->capacity * 2 : 64;
        CStallMonitorImage *grown = realloc(list->images, (size_t)capacity * sizeof(CStallMonitorImage));
        if (grown == NULL) {
            context->failed = 1;
            return 1;
        }
        list->images = grown;
        context->capacity = capacity;
    }
    CStallMonitorImage *image = &list->images[list->count];
    memset(image, 0, sizeof(*image));
    uintptr_t low = UINTPTR_MAX, high = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type == PT_LOAD) {
            uintptr_t start = info->dlpi_addr + header->p_vaddr;
            uintptr_t stop = start + header->p_memsz;
            if (start < low) low = start;
            if (stop > high) high = stop;
        } else if (header->p_type == PT_NOTE && image->build_id_size == 0) {
            read_build_id(info, header, image);
        }
    }
    if (high == 0) return 0;  // nothing mapped: skip
    image->start = low;
    image->end = high;
    image->bias = info->dlpi_addr;
    const char *name = info->dlpi_name;
    if (list->count == 0 && (name == NULL || name[0] == '\0')) {
        char path[PATH_MAX];
        ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
        path[length > 0 ? length : 0] = '\0';
        image->path = strdup(path);
        image->is_main = 1;
    } else {
        image->path = strdup(name ? name : "");
    }
    if (image->path == NULL) {
        context->failed = 1;
        return 1;
    }
    list->count++;
    return 0;
}

int CStallMonitor_images_copy(CStallMonitorImageList *list) {
    list->images = NULL;
    list->count = 0;
    collect_context context = {.list = list, .capacity = 0, .failed = 0};
    dl_iterate_phdr(collect, &context);
    if (context.failed) {
        CStallMonitor_images_free(list);
        return -1;
    }
    return 0;
}

void CStallMonitor_images_free(CStallMonitorImageList *list) {
    for (int i = 0; i < list->count; i++) free(list->images[i].path);
    free(list->images);
    list->images = NULL;
    list->count = 0;
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *data) {
    if (size < offsetof(struct dl_phdr_info, dlpi_subs)) return 1;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;  // the counters are the same in every entry: one is enough
}

unsigned long long CStallMonitor_images_added(void) {
    unsigned long long adds = 0;
    dl_iterate_phdr(read_adds, &adds);
    return adds;
}
